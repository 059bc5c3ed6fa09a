package rules

import (
	"slices"
	"sort"
	"strings"
)

// Merging follows GEP-713 Standard ("Hierarchy", "Conflict resolution", "Merge strategies")
// and the Kuadrant Defaults & Overrides RFC:
//   - precedence on a path: higher overrides > lower overrides > lower defaults > higher
//     defaults (Experimental GEP "Hierarchy": A override > B override > C override >
//     C default > B default > A default); bare rules are atomic defaults;
//   - at one level the older creationTimestamp is higher, then {namespace}/{name};
//   - the higher policy of a pair dictates the strategy: atomic (the winner's whole block),
//     patch (scalar by scalar; lists and maps of strings replaced whole), merge (by named rule);
//   - a lower policy may deactivate named default rules from above with its `remove` field
//     (Kuadrant RFC, Examples F); overrides cannot be removed.

// Unit is one setting of an effective policy and the policy that supplied it.
type Unit struct {
	Path   string
	Segs   []string
	Value  any
	Source *Policy
}

// Effective is the effective policy of one kind on one context path.
type Effective struct {
	Path  ContextPath
	units map[string]Unit
	// lostTo remembers, for a setting removed from the effective policy, which policy's
	// action removed it (an atomic replacement or a `remove`).
	lostTo map[string]*Policy
	// Policies are those attached along the path, highest first.
	Policies []*Policy

	// Buffers kept between folds when one Effective is reused (ImpactOf folds every path
	// a policy reaches, one after another).
	sorted              []*Policy
	defaults, overrides []attachedBlock
}

// Units returns the effective settings, sorted by path.
func (e *Effective) Units() []Unit {
	out := make([]Unit, 0, len(e.units))
	for _, u := range e.units {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Spec rebuilds the effective settings as a nested object.
func (e *Effective) Spec() map[string]any {
	out := map[string]any{}
	for _, u := range e.Units() {
		m := out
		for _, seg := range u.Segs[:len(u.Segs)-1] {
			next, ok := m[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[seg] = next
			}
			m = next
		}
		m[u.Segs[len(u.Segs)-1]] = u.Value
	}
	return out
}

// Sources maps each effective setting to the policy that supplied it ("namespace/name").
func (e *Effective) Sources() map[string]string {
	out := make(map[string]string, len(e.units))
	for path, u := range e.units {
		out[path] = u.Source.Ref()
	}
	return out
}

// attachedBlock is one block of one policy at one level of a path.
type attachedBlock struct {
	policy *Policy
	level  int
	block  Block
}

// Fold computes the effective policy of a row's kind along a path.
func Fold(snap Snapshot, row *KindRow, path ContextPath, cache *UnitCache) *Effective {
	e := &Effective{}
	e.fold(snap, row, path, cache)
	return e
}

// fold computes into e, reusing its maps and buffers: a fold per path of a policy that
// reaches thousands would otherwise allocate two maps and three slices each time.
func (e *Effective) fold(snap Snapshot, row *KindRow, path ContextPath, cache *UnitCache) {
	e.Path = path
	if e.units == nil {
		e.units, e.lostTo = map[string]Unit{}, map[string]*Policy{}
	}
	clear(e.units)
	clear(e.lostTo)
	e.Policies = e.Policies[:0]
	defaults, overrides := e.defaults[:0], e.overrides[:0]
	var buf [maxPathKeys]TargetKey
	for level, key := range path.appendKeys(buf[:0]) {
		atLevel := snap.PoliciesAt(row.GroupKind(), key)
		if len(atLevel) == 0 {
			continue
		}
		sorted := append(e.sorted[:0], atLevel...)
		slices.SortFunc(sorted, func(a, b *Policy) int {
			if a.Higher(b) {
				return -1
			}
			if b.Higher(a) {
				return 1
			}
			return 0
		})
		e.sorted = sorted
		for _, p := range sorted {
			// A policy attached at two levels of one path (two targetRefs) counts at the
			// higher one. The policies of one path are a handful: a scan, not a map.
			if slices.Contains(e.Policies, p) {
				continue
			}
			e.Policies = append(e.Policies, p)
			for _, b := range cache.Blocks(p) {
				ab := attachedBlock{policy: p, level: level, block: b}
				if b.Class == OverridesClass {
					overrides = append(overrides, ab)
				} else {
					defaults = append(defaults, ab)
				}
			}
		}
	}
	e.defaults, e.overrides = defaults, overrides
	// Defaults, highest first: each lower block merges in with the strategy of the block
	// above it, and wins where they overlap.
	prevStrategy, prevLevel := "", -1
	for _, ab := range defaults {
		if row.Class == Direct && ab.level == prevLevel {
			continue // merge strategy None: the oldest at one attachment point wins alone
		}
		prevLevel = ab.level
		e.removeNamed(ab.policy, cache)
		units := cache.Units(ab.policy, ab.block)
		if prevStrategy == "" || prevStrategy == StrategyAtomic {
			if prevStrategy != "" && len(units) > 0 {
				e.replaceAll(ab.policy)
			}
		}
		e.overlay(units)
		prevStrategy = ab.block.Strategy
	}
	// Overrides, lowest first, so that the highest is applied last and wins; each with its
	// own strategy (the override is the higher of every pair it meets).
	for i := len(overrides) - 1; i >= 0; i-- {
		ab := overrides[i]
		units := cache.Units(ab.policy, ab.block)
		if ab.block.Strategy == StrategyAtomic {
			e.replaceAll(ab.policy)
		}
		e.overlay(units)
	}
}

// replaceAll drops every setting: an atomic winner takes the whole block.
func (e *Effective) replaceAll(winner *Policy) {
	for path, u := range e.units {
		if u.Source != winner {
			e.lostTo[path] = winner
		}
		delete(e.units, path)
	}
}

// overlay sets each unit, replacing the same setting and any setting nested in, or
// enclosing, it.
func (e *Effective) overlay(units []Unit) {
	for _, u := range units {
		for path, old := range e.units {
			if path == u.Path || isBelow(path, u.Path) || isBelow(u.Path, path) {
				if old.Source != u.Source && path != u.Path {
					e.lostTo[path] = u.Source
				}
				delete(e.units, path)
			}
		}
		e.units[u.Path] = u
	}
}

// isBelow reports whether the dotted setting path lies under parent ("a.b" under "a"),
// without building parent+"." on every comparison of every fold.
func isBelow(path, parent string) bool {
	return len(path) > len(parent) && path[len(parent)] == '.' && path[:len(parent)] == parent
}

// removeNamed applies a policy's `remove` list: named default rules from above are
// deactivated (Kuadrant RFC, Example F1). It runs in the defaults phase only, so it never
// touches overrides (Example F2).
func (e *Effective) removeNamed(p *Policy, cache *UnitCache) {
	for _, name := range cache.Removes(p) {
		for path, u := range e.units {
			if u.Source != p && u.Segs[len(u.Segs)-1] == name {
				e.lostTo[path] = p
				delete(e.units, path)
			}
		}
	}
}

// UnitCache memoizes the blocks and units of policies during one computation, so a
// policy met on ten thousand paths is decoded once.
type UnitCache struct {
	blocks  map[*Policy][]Block
	units   map[*Policy]map[string][]Unit
	removes map[*Policy][]string
}

// NewUnitCache returns an empty cache.
func NewUnitCache() *UnitCache {
	return &UnitCache{blocks: map[*Policy][]Block{}, units: map[*Policy]map[string][]Unit{}, removes: map[*Policy][]string{}}
}

// Blocks returns a policy's rule blocks.
func (c *UnitCache) Blocks(p *Policy) []Block {
	b, ok := c.blocks[p]
	if !ok {
		b = p.Blocks()
		c.blocks[p] = b
	}
	return b
}

// Units returns the settings of one block: scalars, except that each named rule is one
// setting (so patch and merge both overlay by unit).
func (c *UnitCache) Units(p *Policy, b Block) []Unit {
	byField := c.units[p]
	if byField == nil {
		byField = map[string][]Unit{}
		c.units[p] = byField
	}
	if u, ok := byField[b.Field]; ok {
		return u
	}
	var out []Unit
	flattenUnits(nil, withoutKey(b.Body, p.Row.Stanzas.Remove), p.Row.NamedRules, p, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	byField[b.Field] = out
	return out
}

// Removes returns the named rules a policy deactivates.
func (c *UnitCache) Removes(p *Policy) []string {
	if r, ok := c.removes[p]; ok {
		return r
	}
	var out []string
	if f := p.Row.Stanzas.Remove; f != "" {
		for _, v := range listAny(p.Spec()[f]) {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	c.removes[p] = out
	return out
}

func flattenUnits(prefix []string, m map[string]any, namedRules []string, p *Policy, out *[]Unit) {
	for k, v := range m {
		segs := append(append([]string(nil), prefix...), k)
		path := strings.Join(segs, ".")
		child, isMap := v.(map[string]any)
		switch {
		case isMap && containsString(namedRules, path):
			for name, rule := range child {
				rs := append(append([]string(nil), segs...), name)
				*out = append(*out, Unit{Path: path + "." + name, Segs: rs, Value: rule, Source: p})
			}
		case isMap && len(child) > 0:
			flattenUnits(segs, child, namedRules, p, out)
		default:
			*out = append(*out, Unit{Path: path, Segs: segs, Value: v, Source: p})
		}
	}
}
