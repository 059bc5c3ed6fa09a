package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Setting is one unit of a block of rules, and the policy that supplied it.
//
// There are two granularities, and both are read from the same blocks:
//   - the fold overlays settings at the finest granularity a strategy can merge by
//     (Cache.Settings): every scalar path, except that a named rule is one setting whole;
//   - two blocks at one level are compared for a conflict at the coarser of their two
//     strategies (SettingsOf): the whole block (atomic), every scalar (patch), or each
//     named rule and each other field whole (merge).
type Setting struct {
	// Path is dotted, relative to the block ("colors.light", "limits.per-user"); empty
	// for the whole block. An item of a keyed list is named in it by its key.
	Path string
	// Field is where the setting sits in the block as a field path relative to it
	// ("jsonPatches[2].operation.value"), set by SettingsOf where it differs from Path.
	Field string
	// Segs is Path split at its dots; set by the fold only (Effective.Spec rebuilds the
	// nested object from it).
	Segs  []string
	Value any
	// Source is the policy that supplied the setting; set by the fold only.
	Source *policy.Policy
	// Items marks the segments of Segs that name an item of a keyed list, in order; set by
	// the fold only. Path and Segs name an item by its key with dots escaped (the form the
	// fold and the conflict rules compare); Display shows the list as the policy wrote it.
	Items []ListItem
	// Key, set by the fold, says the setting is a key field of the keyed-list item its last
	// Items mark names (compression[type=Gzip].type): the field names the item, so where the
	// item has other fields they are its settings and the key is none of its own.
	Key bool
}

// ItemPath is the path of the keyed-list item a setting lies in (its last Items mark), or "".
func (u Setting) ItemPath() string {
	if len(u.Items) == 0 {
		return ""
	}
	return strings.Join(u.Segs[:u.Items[len(u.Items)-1].Seg+1], ".")
}

// ListItem marks one segment of a Setting's Segs as an item of a keyed list.
type ListItem struct {
	// Seg is the index in Segs of the item's (escaped) key; Segs[Seg-1] names the list.
	Seg int
	// Selector names the item as people read it: its key fields and values as written,
	// "type=spdy/3.1" (several keys joined by ",").
	Selector string
	// Index is the item's position in the list its source wrote.
	Index int
}

// granularity orders strategies from coarse to fine, for comparing two blocks.
var granularity = map[string]int{kinds.StrategyAtomic: 0, kinds.StrategyMerge: 1, kinds.StrategyPatch: 2}

// CoarserStrategy returns the coarser of two strategies; two blocks are compared at the
// granularity both of them can see.
func CoarserStrategy(a, b string) string {
	if granularity[a] <= granularity[b] {
		return a
	}
	return b
}

// SettingsOf returns a block's settings at the given strategy's granularity, sorted by
// path, for comparing two blocks.
func SettingsOf(b policy.Block, strategy string, namedRules []string) []Setting {
	var out []Setting
	switch strategy {
	case kinds.StrategyPatch:
		flattenScalars("", "", b.Body, b.ListKeys, &out)
	case kinds.StrategyMerge:
		flattenNamedRules("", "", b.Body, namedRules, b.ListKeys, &out)
	default:
		out = []Setting{{Path: "", Value: b.Body}}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// flattenScalars follows GEP-713 (Experimental) "Merging into existing spec fields": nested
// objects merge field by field, lists are replaced whole, except the keyed lists of the
// block, whose items merge one by one (keyedItems). Without a schema a string map cannot be
// told from a struct, so every object is merged field by field.
func flattenScalars(prefix, fieldPrefix string, m map[string]any, listKeys map[string][]string, out *[]Setting) {
	for k, v := range m {
		path, fieldPath := joinPath(prefix, k), joinPath(fieldPrefix, k)
		if child, ok := v.(map[string]any); ok && len(child) > 0 {
			flattenScalars(path, fieldPath, child, listKeys, out)
			continue
		}
		if items, ok := keyedItems(v, listKeys[path]); ok {
			for _, it := range items {
				flattenScalars(path+"."+it.key, fmt.Sprintf("%s[%d]", fieldPath, it.index), it.item, listKeys, out)
			}
			continue
		}
		s := Setting{Path: path, Value: v}
		if fieldPath != path {
			s.Field = fieldPath
		}
		*out = append(*out, s)
	}
}

// keyedItems returns the items of a keyed list, each named by the values of its key fields
// joined by "/" (a Kubernetes strategic merge patch merges such a list by its
// patchMergeKey). It refuses a value that is not such a list, or an item without its keys
// or two items with one key: that list is one value whole, as a patch would leave it.
func keyedItems(v any, keys []string) ([]keyedItem, bool) {
	list, ok := v.([]any)
	if !ok || len(keys) == 0 || len(list) == 0 {
		return nil, false
	}
	out := make([]keyedItem, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		parts := make([]string, len(keys))
		selector := make([]string, len(keys))
		for i, key := range keys {
			var v any = m
			for _, seg := range strings.Split(key, ".") {
				obj, _ := v.(map[string]any)
				v = obj[seg]
			}
			s, ok := keyString(v)
			if !ok || s == "" {
				return nil, false
			}
			parts[i] = strings.ReplaceAll(s, ".", "_") // a dot would split the setting's path
			selector[i] = key + "=" + s
		}
		name := strings.Join(parts, "/")
		if slices.ContainsFunc(out, func(it keyedItem) bool { return it.key == name }) {
			return nil, false
		}
		out = append(out, keyedItem{key: name, selector: strings.Join(selector, ","), index: i, item: m})
	}
	return out, true
}

// keyString renders a key field's value: a string as written, an integer (a port) in
// decimal. Any other value makes the list not keyed.
func keyString(v any) (string, bool) {
	switch n := v.(type) {
	case string:
		return n, true
	case int64:
		return strconv.FormatInt(n, 10), true
	case int:
		return strconv.Itoa(n), true
	case float64:
		if n == float64(int64(n)) {
			return strconv.FormatInt(int64(n), 10), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
	}
	return "", false
}

// keyedItem is one item of a keyed list: its key (escaped for a setting's path), its key
// fields as written (ListItem.Selector), its index in the list, the item.
type keyedItem struct {
	key      string
	selector string
	index    int
	item     map[string]any
}

// flattenNamedRules follows the Kuadrant RFC's merge granularity: each entry of a map that
// holds named rules is one setting; any other field is one setting whole. A named rule's
// path may hold `*` for the key of a keyed list's item (kgateway's
// `perPort.*.listener.httpSettings`); such a list is flattened item by item.
func flattenNamedRules(prefix, fieldPrefix string, m map[string]any, namedRules []string, listKeys map[string][]string, out *[]Setting) {
	for k, v := range m {
		path, field := joinPath(prefix, k), joinPath(fieldPrefix, k)
		child, isMap := v.(map[string]any)
		switch {
		case isMap && ruleAt(namedRules, path):
			for name, rule := range child {
				*out = append(*out, Setting{Path: path + "." + name, Field: fieldOf(fieldPrefix, field+"."+name), Value: rule})
			}
		case isMap && ruleUnder(namedRules, path):
			flattenNamedRules(path, field, child, namedRules, listKeys, out)
		default:
			if items, ok := keyedItems(v, listKeys[path]); ok && ruleUnder(namedRules, path) {
				for _, it := range items {
					flattenNamedRules(path+"."+it.key, fmt.Sprintf("%s[%d]", field, it.index), it.item, namedRules, listKeys, out)
				}
				continue
			}
			*out = append(*out, Setting{Path: path, Field: fieldOf(fieldPrefix, field), Value: v})
		}
	}
}

// fieldOf is a setting's field as written, set only where it differs from its path (inside
// a keyed list's item): Setting.Field.
func fieldOf(fieldPrefix, field string) string {
	if !strings.Contains(fieldPrefix, "[") {
		return ""
	}
	return field
}

// ruleAt reports whether a named rule's path is path, `*` matching any one segment.
func ruleAt(namedRules []string, path string) bool {
	for _, rule := range namedRules {
		if rule == path || (strings.Contains(rule, "*") && wildMatch(rule, path, false)) {
			return true
		}
	}
	return false
}

// ruleUnder reports whether a named rule lies below path.
func ruleUnder(namedRules []string, path string) bool {
	for _, rule := range namedRules {
		if strings.Contains(rule, "*") {
			if wildMatch(rule, path, true) {
				return true
			}
		} else if len(rule) > len(path) && rule[len(path)] == '.' && strings.HasPrefix(rule, path) {
			return true
		}
	}
	return false
}

// wildMatch matches path against rule segment by segment, `*` matching any one; prefix
// asks whether rule continues below path instead of ending there.
func wildMatch(rule, path string, prefix bool) bool {
	r, segs := strings.Split(rule, "."), strings.Split(path, ".")
	if prefix {
		return len(r) > len(segs) && segsMatch(r[:len(segs)], segs)
	}
	return len(r) == len(segs) && segsMatch(r, segs)
}

func segsMatch(pattern, segs []string) bool {
	for i := range pattern {
		if pattern[i] != "*" && pattern[i] != segs[i] {
			return false
		}
	}
	return true
}

func joinPath(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func hasPrefixIn(list []string, prefix string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, prefix) {
			return true
		}
	}
	return false
}

// FieldsOf returns the settings of block b at the listed dotted field paths that it sets,
// each whole, sorted by path.
func FieldsOf(b policy.Block, fields []string) []Setting {
	var out []Setting
	for _, f := range fields {
		var v any = b.Body
		for _, seg := range strings.Split(f, ".") {
			m, _ := v.(map[string]any)
			if v = m[seg]; v == nil {
				break
			}
		}
		if v != nil {
			out = append(out, Setting{Path: f, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
