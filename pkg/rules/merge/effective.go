package merge

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
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

// Effective is the effective policy of one kind on one context path.
type Effective struct {
	Path     topology.ContextPath
	settings map[string]Setting
	// lostTo remembers, for a setting removed from the effective policy, which policy's
	// action removed it (an atomic replacement or a `remove`).
	lostTo map[string]*policy.Policy
	// Policies are those attached along the path, highest first.
	Policies []*policy.Policy

	// Buffers kept between folds when one Effective is reused (impact.Of folds every path
	// a policy reaches, one after another).
	sorted              []*policy.Policy
	defaults, overrides []attachedBlock
}

// Settings returns the effective settings, sorted by path.
func (e *Effective) Settings() []Setting {
	out := make([]Setting, 0, len(e.settings))
	for _, u := range e.settings {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Spec rebuilds the effective settings as a nested object in the policies' own shape
// (Display).
func (e *Effective) Spec() map[string]any {
	spec, _ := e.Display()
	return spec
}

// Setting returns the effective setting at path.
func (e *Effective) Setting(path string) (Setting, bool) {
	s, ok := e.settings[path]
	return s, ok
}

// Each yields the effective settings, in no order: `for s := range e.Each`. (A method, not
// a function returning an iterator: the impact walk ranges over it on every path a policy
// reaches, and a returned iterator would be one allocation each time.)
func (e *Effective) Each(yield func(Setting) bool) {
	for _, s := range e.settings {
		if !yield(s) {
			return
		}
	}
}

// LostTo yields each setting removed from the effective policy and the policy whose
// action removed it (an atomic replacement or a `remove`), in no order.
func (e *Effective) LostTo(yield func(string, *policy.Policy) bool) {
	for path, p := range e.lostTo {
		if !yield(path, p) {
			return
		}
	}
}

// Empty reports whether the effective policy sets nothing.
func (e *Effective) Empty() bool { return len(e.settings) == 0 }

// Sources maps each effective setting, named as Display names it, to the policy that
// supplied it ("namespace/name").
func (e *Effective) Sources() map[string]string {
	_, shown := e.Display()
	out := make(map[string]string, len(shown))
	for _, s := range shown {
		out[s.Name] = s.Source
	}
	return out
}

// attachedBlock is one block of one policy at one level of a path.
type attachedBlock struct {
	policy *policy.Policy
	level  int
	block  policy.Block
}

// Fold computes the effective policy of a row's kind along a path.
func Fold(snap topology.Snapshot, row *kinds.KindRow, path topology.ContextPath, cache *Cache) *Effective {
	e := &Effective{}
	e.Compute(snap, row, path, cache)
	return e
}

// Compute folds into e, reusing its maps and buffers: a fold per path of a policy that
// reaches thousands would otherwise allocate two maps and three slices each time.
func (e *Effective) Compute(snap topology.Snapshot, row *kinds.KindRow, path topology.ContextPath, cache *Cache) {
	e.Path = path
	if e.settings == nil {
		e.settings, e.lostTo = map[string]Setting{}, map[string]*policy.Policy{}
	}
	clear(e.settings)
	clear(e.lostTo)
	e.Policies = e.Policies[:0]
	defaults, overrides := e.defaults[:0], e.overrides[:0]
	var buf [topology.MaxPathKeys]policy.TargetKey
	for level, key := range path.AppendKeys(buf[:0]) {
		atLevel := snap.PoliciesAt(row.GroupKind(), key)
		if len(atLevel) == 0 {
			continue
		}
		sorted := append(e.sorted[:0], atLevel...)
		slices.SortFunc(sorted, func(a, b *policy.Policy) int {
			if a.Higher(b) {
				return -1
			}
			if b.Higher(a) {
				return 1
			}
			return 0
		})
		e.sorted = sorted
		levelStart := len(defaults)
		for _, p := range sorted {
			// A policy attached at two levels of one path (two targetRefs, or a reference
			// and a selector) applies at each: at the lower it is as specific as any other
			// there (Envoy Gateway: its ListenerSet attachment overrides its Gateway one,
			// and holds the ListenerSet against a newer policy). It is listed once. The
			// policies of one path are a handful: a scan, not a map.
			if !slices.Contains(e.Policies, p) {
				e.Policies = append(e.Policies, p)
			}
			for _, b := range cache.Blocks(p) {
				ab := attachedBlock{policy: p, level: level, block: b}
				if b.Class == policy.OverridesClass {
					overrides = append(overrides, ab)
				} else {
					defaults = append(defaults, ab)
				}
			}
		}
		orderLevel(row, defaults[levelStart:])
	}
	e.defaults, e.overrides = defaults, overrides
	// Defaults, highest first: each lower block merges in with the strategy of the block
	// above it (or its own, where the row says the lower declares it), and wins where they
	// overlap.
	prevStrategy, prevLevel := "", -1
	var keyed map[string]*policy.Policy // mode key: the key of each policy applied at prevLevel
	for _, ab := range defaults {
		if row.Conflicts.Mode == kinds.ConflictsNone && ab.level == prevLevel {
			continue // merge strategy None: the oldest at one attachment point applies alone
		}
		if row.Conflicts.Mode == kinds.ConflictsKey {
			if ab.level != prevLevel {
				clear(keyed)
			}
			if k, ok := row.Conflicts.Key.Of(ab.policy.Spec()); ok {
				if first, seen := keyed[k]; seen && first != ab.policy {
					// One per key at one attachment point: the first applies, this one nowhere.
					for _, u := range cache.Settings(ab.policy, ab.block) {
						e.lostTo[u.Path] = first
					}
					prevLevel = ab.level
					continue
				}
				if keyed == nil {
					keyed = map[string]*policy.Policy{}
				}
				keyed[k] = ab.policy
			}
		}
		prevLevel = ab.level
		e.removeNamed(ab.policy, cache)
		how := prevStrategy // GEP-713: the higher block of the pair dictates
		if row.Strategy.DeclaredBy == kinds.DeclaredByLower && prevStrategy != "" {
			how = ab.block.Strategy // the lower block says how it merges into the rest
		}
		if row.Conflicts.Mode == kinds.ConflictsNever || row.Conflicts.Mode == kinds.ConflictsKey {
			how = kinds.StrategyPatch // all apply together; each keeps its own settings (Cache.Settings)
		}
		mergeDefaults(e, how, ab.policy, cache.Settings(ab.policy, ab.block))
		prevStrategy = ab.block.Strategy
	}
	// Overrides, lowest first, so that the highest is applied last and wins; each with its
	// own strategy (the override is the higher of every pair it meets)...
	for i := len(overrides) - 1; i >= 0; i-- {
		ab := overrides[i]
		settings := cache.Settings(ab.policy, ab.block)
		if len(settings) > 0 && row.Strategy.DeclaredBy == kinds.DeclaredByHigher {
			e.dropAtomicDefaultsAbove(ab, defaults, cache)
		}
		mergeOverride(e, ab.block.Strategy, ab.policy, settings)
	}
}

// orderLevel puts the defaults of one level in the order they are applied, the last
// applied winning where two set the same thing: by ascending rank (the greater rank wins),
// then oldest first (GEP-713: of two defaults the newer wins), or newest first where the
// row says the oldest wins. In mode none only the first applies: the greatest rank, then
// the oldest (in mode key, the first of each key). (Overrides keep oldest first: the fold
// applies them in reverse, so the oldest wins, and no kind ranks them.)
func orderLevel(row *kinds.KindRow, level []attachedBlock) {
	if len(level) < 2 {
		return
	}
	byAge := func(a, b *policy.Policy) int {
		switch {
		case a.Higher(b):
			return -1
		case b.Higher(a):
			return 1
		}
		return 0
	}
	firstAlone := row.Conflicts.Mode == kinds.ConflictsNone || row.Conflicts.Mode == kinds.ConflictsKey
	slices.SortStableFunc(level, func(x, y attachedBlock) int {
		a, b := x.policy, y.policy
		if a.Rank != b.Rank {
			if firstAlone {
				return cmp.Compare(b.Rank, a.Rank)
			}
			return cmp.Compare(a.Rank, b.Rank)
		}
		if row.Order == kinds.OrderNameFirst {
			// The first by namespace/name wins: applied last, or alone in mode none.
			byName := cmp.Compare(b.Namespace+"/"+b.Name, a.Namespace+"/"+a.Name)
			if firstAlone {
				return -byName
			}
			return byName
		}
		if row.Order == kinds.OrderOldestWins && !firstAlone {
			return byAge(b, a)
		}
		return byAge(a, b)
	})
}

// Winner is the policy whose setting stands at path, or whose action removed it.
func (e *Effective) Winner(path string) *policy.Policy {
	if u, ok := e.settings[path]; ok {
		return u.Source
	}
	for p, u := range e.settings {
		if strings.HasPrefix(path, p+".") || strings.HasPrefix(p, path+".") {
			return u.Source
		}
	}
	return e.lostTo[path]
}

// dropAtomicDefaultsAbove applies the other half of "the higher policy of a pair dictates
// the strategy": an override meets a higher policy's atomic defaults, so it takes the
// block whole and those defaults contribute nothing on this path, whatever the override's
// own strategy. (A policy with overrides blocks too, which only Kuadrant's older behaviour
// allows, keeps its settings: they may be its overrides'.)
func (e *Effective) dropAtomicDefaultsAbove(override attachedBlock, defaults []attachedBlock, cache *Cache) {
	for _, d := range defaults {
		if d.level >= override.level || d.block.Strategy != kinds.StrategyAtomic || hasOverrides(d.policy, cache) {
			continue
		}
		for path, s := range e.settings {
			if s.Source == d.policy {
				e.lostTo[path] = override.policy
				delete(e.settings, path)
			}
		}
	}
}

func hasOverrides(p *policy.Policy, cache *Cache) bool {
	for _, b := range cache.Blocks(p) {
		if b.Class == policy.OverridesClass {
			return true
		}
	}
	return false
}
