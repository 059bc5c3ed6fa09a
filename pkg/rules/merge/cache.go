package merge

import (
	"slices"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Cache memoizes the blocks and units of policies during one computation, so a
// policy met on ten thousand paths is decoded once.
type Cache struct {
	blocks   map[*policy.Policy][]policy.Block
	settings map[*policy.Policy]map[string][]Setting
	removes  map[*policy.Policy][]string
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{blocks: map[*policy.Policy][]policy.Block{}, settings: map[*policy.Policy]map[string][]Setting{}, removes: map[*policy.Policy][]string{}}
}

// Blocks returns a policy's rule blocks.
func (c *Cache) Blocks(p *policy.Policy) []policy.Block {
	b, ok := c.blocks[p]
	if !ok {
		b = p.Blocks()
		c.blocks[p] = b
	}
	return b
}

// Settings returns the settings of one block as the fold overlays them: scalars, except
// that each named rule is one setting (so patch and merge both overlay setting by setting).
func (c *Cache) Settings(p *policy.Policy, b policy.Block) []Setting {
	byField := c.settings[p]
	if byField == nil {
		byField = map[string][]Setting{}
		c.settings[p] = byField
	}
	if u, ok := byField[b.Field]; ok {
		return u
	}
	var out []Setting
	var prefix []string
	if p.Row.Conflicts.Mode == kinds.ConflictsNever || p.Row.Conflicts.Mode == kinds.ConflictsKey {
		// Every policy of such a kind applies together (Istio's authorization policies,
		// NGINX snippets; AWS's access log subscriptions, one per key at a point): none
		// replaces another's settings, so each keeps its own.
		prefix = []string{p.Ref()}
	}
	flattenForFold(prefix, policy.WithoutKey(b.Body, p.Row.Stanzas.Remove), p.Row.NamedRules, b.ListKeys, p, nil, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	byField[b.Field] = out
	return out
}

// Removes returns the named rules a policy deactivates.
func (c *Cache) Removes(p *policy.Policy) []string {
	if r, ok := c.removes[p]; ok {
		return r
	}
	var out []string
	if f := p.Row.Stanzas.Remove; f != "" {
		for _, v := range asList(p.Spec()[f]) {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	c.removes[p] = out
	return out
}

// flattenForFold appends the fold's settings of m; marks are the keyed-list items the
// settings of m lie in (Setting.Items).
func flattenForFold(prefix []string, m map[string]any, namedRules []string, listKeys map[string][]string, p *policy.Policy, marks []ListItem, out *[]Setting) {
	for k, v := range m {
		segs := append(append([]string(nil), prefix...), k)
		path := strings.Join(segs, ".")
		child, isMap := v.(map[string]any)
		switch {
		case isMap && ruleAt(namedRules, path):
			for name, rule := range child {
				rs := append(append([]string(nil), segs...), name)
				*out = append(*out, Setting{Path: path + "." + name, Segs: rs, Value: rule, Source: p, Items: marks})
			}
		case isMap && len(child) > 0:
			flattenForFold(segs, child, namedRules, listKeys, p, marks, out)
		default:
			if items, ok := keyedItems(v, listKeys[path]); ok {
				for _, it := range items {
					// A fresh slice per item: its settings must not share a backing array
					// a sibling item appends to.
					itemMarks := append(marks[:len(marks):len(marks)], ListItem{Seg: len(segs), Selector: it.selector, Index: it.index})
					start := len(*out)
					flattenForFold(segs, map[string]any{it.key: it.item}, namedRules, listKeys, p, itemMarks, out)
					for j := start; j < len(*out); j++ {
						u := &(*out)[j]
						if len(u.Segs) > len(segs)+1 && slices.Contains(listKeys[path], strings.Join(u.Segs[len(segs)+1:], ".")) {
							u.Key = true
						}
					}
				}
				continue
			}
			*out = append(*out, Setting{Path: path, Segs: segs, Value: v, Source: p, Items: marks})
		}
	}
}

func asList(v any) []any {
	items, _ := v.([]any)
	return items
}
