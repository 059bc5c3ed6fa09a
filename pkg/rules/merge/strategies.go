package merge

import (
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// replaceAll drops every setting: an atomic winner takes the whole block.
func (e *Effective) replaceAll(winner *policy.Policy) {
	for path, u := range e.settings {
		if u.Source != winner {
			e.lostTo[path] = winner
		}
		delete(e.settings, path)
	}
}

// overlay sets each unit, replacing the same setting and any setting nested in, or
// enclosing, it. A unit whose value is null removes them and sets nothing (RFC 7386, and
// a strategic merge patch alike): the removal is its source's, recorded in lostTo.
func (e *Effective) overlay(units []Setting) {
	for _, u := range units {
		for path, old := range e.settings {
			if path == u.Path || isBelow(path, u.Path) || isBelow(u.Path, path) {
				if old.Source != u.Source && (path != u.Path || u.Value == nil) {
					e.lostTo[path] = u.Source
				}
				delete(e.settings, path)
			}
		}
		if u.Value == nil {
			e.lostTo[u.Path] = u.Source
			continue
		}
		e.settings[u.Path] = u
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
func (e *Effective) removeNamed(p *policy.Policy, cache *Cache) {
	for _, name := range cache.Removes(p) {
		for path, u := range e.settings {
			if u.Source != p && u.Segs[len(u.Segs)-1] == name {
				e.lostTo[path] = p
				delete(e.settings, path)
			}
		}
	}
}

// The strategies, as the fold applies them. The higher block of a pair dictates the
// strategy: a defaults block merges into what the defaults above it set by their strategy,
// and an overrides block into everything below it by its own. The canonical strategies are
// a closed set (kinds validates every row's values at load), so each is dispatched with a
// switch to a direct call: a call through a function value would make the Effective being
// folded escape to the heap, one more allocation per policy impact.

// mergeDefaults merges a defaults block into the defaults above it by strategy how (the
// strategy of the block above, or the incoming block's own where the lower declares it;
// "" for the first block of a path).
func mergeDefaults(e *Effective, how string, incoming *policy.Policy, settings []Setting) {
	switch how {
	case kinds.StrategyAtomic:
		atomicDefaults(e, incoming, settings)
	default: // the first block, patch and merge
		bySetting(e, incoming, settings)
	}
}

// mergeOverride merges an overrides block, of strategy own, into everything below it.
func mergeOverride(e *Effective, own string, incoming *policy.Policy, settings []Setting) {
	switch own {
	case kinds.StrategyAtomic:
		atomicOverride(e, incoming, settings)
	default: // patch and merge
		bySetting(e, incoming, settings)
	}
}

// atomicDefaults: below atomic defaults, a block that sets anything replaces the whole
// block above it.
func atomicDefaults(e *Effective, incoming *policy.Policy, settings []Setting) {
	if len(settings) > 0 {
		e.replaceAll(incoming)
	}
	e.overlay(settings)
}

// atomicOverride: an atomic override replaces everything below it.
func atomicOverride(e *Effective, incoming *policy.Policy, settings []Setting) {
	e.replaceAll(incoming)
	e.overlay(settings)
}

// bySetting (patch, merge): setting by setting, the incoming block wins where both set.
func bySetting(e *Effective, _ *policy.Policy, settings []Setting) {
	e.overlay(settings)
}
