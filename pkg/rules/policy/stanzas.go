package policy

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// StanzaClass is how a block of rules merges down the hierarchy.
type StanzaClass string

const (
	// DefaultsClass holds bare rules (implicit atomic defaults) and `defaults` blocks.
	DefaultsClass StanzaClass = "defaults"
	// OverridesClass holds `overrides` blocks.
	OverridesClass StanzaClass = "overrides"
)

// Block is one block of rules in a policy: the bare rules, or one defaults/overrides field.
type Block struct {
	// Field is the stanza field name ("defaults", "override"); empty for bare rules.
	Field string
	Class StanzaClass
	// Body is the block's rules, without the strategy field.
	Body map[string]any
	// Strategy is the canonical strategy (atomic|patch|merge) the block uses.
	Strategy string
	// ListKeys are the keyed lists it merges by (kinds.Strategy.ListKeysFor).
	ListKeys map[string][]string
	Path     *field.Path
}

// Bare reports whether the block is the bare rules of the spec.
func (b Block) Bare() bool { return b.Field == "" }

// Blocks splits a policy's spec into its rule blocks, in spec order: bare, defaults, overrides.
func (p *Policy) Blocks() []Block {
	row := p.Row
	fields := p.Spec()
	var blocks []Block
	if bare := bareBody(row, fields); len(bare) > 0 {
		strategy, value := blockStrategy(row, fields, nil)
		blocks = append(blocks, Block{Class: bareClass(row, fields), Body: bare, Strategy: strategy, ListKeys: row.Strategy.ListKeysFor(value), Path: specPath})
	}
	add := func(names []string, class StanzaClass) {
		for _, name := range names {
			raw, ok := fields[name]
			if !ok || raw == nil {
				continue
			}
			body, _ := raw.(map[string]any)
			strategy, value := blockStrategy(row, fields, body)
			blocks = append(blocks, Block{
				Field: name, Class: class, Body: WithoutKey(body, row.Strategy.Field),
				Strategy: strategy, ListKeys: row.Strategy.ListKeysFor(value), Path: specPath.Child(name),
			})
		}
	}
	add(row.Stanzas.Defaults, DefaultsClass)
	add(row.Stanzas.Overrides, OverridesClass)
	return blocks
}

// bareClass is the class of a policy's bare rules: defaults, or overrides where the row's
// ClassBy field holds one of its overrides values.
func bareClass(row *kinds.KindRow, fields map[string]any) StanzaClass {
	c := row.Stanzas.ClassBy
	if c == nil {
		return DefaultsClass
	}
	var v any = fields
	for _, seg := range strings.Split(c.Field, ".") {
		m, _ := v.(map[string]any)
		v = m[seg]
	}
	if s, ok := v.(string); ok && slices.Contains(c.Overrides, s) {
		return OverridesClass
	}
	return DefaultsClass
}

// bareBody is the spec's bare rules: the row's bare fields, or every field that is not a
// target reference, stanza or strategy field.
func bareBody(row *kinds.KindRow, fields map[string]any) map[string]any {
	out := map[string]any{}
	if len(row.Stanzas.Bare) > 0 {
		for _, f := range row.Stanzas.Bare {
			if v, ok := fields[f]; ok && v != nil {
				out[f] = v
			}
		}
		return out
	}
	for k, v := range fields {
		if v != nil && !isStructuralField(row, k) {
			out[k] = v
		}
	}
	return out
}

// isStructuralField reports whether a spec field is a target reference, a stanza, a
// strategy or an order field of the row rather than a rule. (Looked up in the row's short
// lists, not in a set built per call: this runs for every policy on every path an impact
// folds.)
func isStructuralField(row *kinds.KindRow, field string) bool {
	switch field {
	case "targetRef", "targetRefs", "targetSelectors":
		return true
	case "":
		return false
	}
	return field == row.Strategy.Field || field == row.Stanzas.Remove || field == row.Conflicts.OrderField ||
		slices.Contains(row.Stanzas.Defaults, field) || slices.Contains(row.Stanzas.Overrides, field)
}

// blockStrategy resolves a block's canonical strategy and the value that named it ("" for
// the default): its own strategy field, else the spec-level one, else the row default. Unknown values fall back to the default; the
// strategy rule reports them.
func blockStrategy(row *kinds.KindRow, fields, body map[string]any) (strategy, value string) {
	if row.Strategy.Field != "" {
		for _, m := range []map[string]any{body, fields} {
			if v, ok := m[row.Strategy.Field].(string); ok {
				if s, ok := row.Strategy.Values[v]; ok {
					return s, v
				}
			}
		}
	}
	return row.Strategy.Default, ""
}

// WithoutKey returns m without key, copying only when key is there.
func WithoutKey(m map[string]any, key string) map[string]any {
	if key == "" {
		return m
	}
	if _, ok := m[key]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
