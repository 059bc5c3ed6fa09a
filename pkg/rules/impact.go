package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Impact statuses (GEP-713 "Status reporting", plus NoTargets).
const (
	StatusEnforced          = "Enforced"
	StatusPartiallyEnforced = "PartiallyEnforced"
	StatusOverridden        = "Overridden"
	StatusNoTargets         = "NoTargets"
)

// Impact is the predicted effect of one policy on the state it is judged against.
type Impact struct {
	Status            string   `json:"status"`
	Contexts          int      `json:"contexts"`
	Enforced          int      `json:"enforced"`
	PartiallyEnforced int      `json:"partiallyEnforced"`
	Overridden        int      `json:"overridden"`
	Overrides         []string `json:"overrides"`
	OverriddenBy      []string `json:"overriddenBy"`
	// OverridesTotal and OverriddenByTotal are set when an annotation lists only the first
	// MaxAnnotatedRefs of a longer list.
	OverridesTotal    int    `json:"overridesTotal,omitempty"`
	OverriddenByTotal int    `json:"overriddenByTotal,omitempty"`
	ObservedAt        string `json:"observedAt,omitempty"`
}

// MaxAnnotatedRefs bounds the policy lists of the impact annotation. A Gateway-level
// override can override thousands of route policies, and all annotations of an object
// together may not exceed 256 KiB: an unbounded list would make the API server refuse the
// very write the mutating webhook annotates.
const MaxAnnotatedRefs = 50

// ForAnnotation returns the impact with its lists cut to MaxAnnotatedRefs, saying how long
// each was.
func (im Impact) ForAnnotation() Impact {
	if len(im.Overrides) > MaxAnnotatedRefs {
		im.OverridesTotal = len(im.Overrides)
		im.Overrides = im.Overrides[:MaxAnnotatedRefs:MaxAnnotatedRefs]
	}
	if len(im.OverriddenBy) > MaxAnnotatedRefs {
		im.OverriddenByTotal = len(im.OverriddenBy)
		im.OverriddenBy = im.OverriddenBy[:MaxAnnotatedRefs:MaxAnnotatedRefs]
	}
	return im
}

// PathsOf returns the distinct context paths a policy's targets reach.
func PathsOf(snap Snapshot, p *Policy) []ContextPath { return pathsOf(snap, p, nil) }

// pathsOf is PathsOf appending to into.
func pathsOf(snap Snapshot, p *Policy, into []ContextPath) []ContextPath {
	for _, key := range uniqueKeys(p) {
		into = pathsThrough(snap, p.Row, key, into)
	}
	return distinctPaths(into) // in place
}

// pathBuffers keep the path lists of impact computations for the next one: a path is 160
// bytes, and growing a fresh list for each review was a tenth of what the webhook allocated
// under load. Lists longer than maxPooledPaths are left to the collector.
var pathBuffers = sync.Pool{New: func() any { return new([]ContextPath) }}

const maxPooledPaths = 1024

// pairwiseUpTo is how many values (paths, keys) are compared pairwise before a set is
// worth building.
const pairwiseUpTo = 32

// distinctPaths drops repeated paths in place, keeping the first of each.
func distinctPaths(paths []ContextPath) []ContextPath {
	out := paths[:0]
	if len(paths) <= pairwiseUpTo {
		for _, c := range paths {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	seen := make(map[ContextPath]struct{}, len(paths)) // paths are comparable values
	for _, c := range paths {
		if _, dup := seen[c]; !dup {
			seen[c] = struct{}{}
			out = append(out, c)
		}
	}
	return out
}

// ImpactOf computes a policy's impact: over every path it reaches, the effective policy of
// its kind, and whether each of its settings survives there (its value is the effective
// one). Enforced: all survive on every path; Overridden: none survives anywhere. The
// snapshot must hold p. The work grows with the paths p reaches, not with the cluster.
func ImpactOf(snap Snapshot, p *Policy, cache *UnitCache) Impact {
	im := Impact{Overrides: []string{}, OverriddenBy: []string{}}
	if cache == nil {
		cache = NewUnitCache()
	}
	buf := pathBuffers.Get().(*[]ContextPath)
	paths := pathsOf(snap, p, (*buf)[:0])
	defer func() {
		if cap(paths) <= maxPooledPaths {
			clear(paths[:cap(paths)]) // hold no objects a later snapshot may have dropped, duplicates included
			*buf = paths[:0]
			pathBuffers.Put(buf)
		}
	}()
	im.Contexts = len(paths)
	if len(paths) == 0 {
		im.Status = StatusNoTargets
		return im
	}
	var mine []Unit
	for _, b := range cache.Blocks(p) {
		mine = append(mine, cache.Units(p, b)...)
	}
	overrides, overriddenBy := map[string]bool{}, map[string]bool{}
	e := &Effective{}
	for _, path := range paths {
		e.fold(snap, p.Row, path, cache)
		survived := 0
		for _, u := range mine {
			if got, ok := e.units[u.Path]; ok && sameValue(got.Value, u.Value) {
				survived++
				continue
			}
			if w := e.winner(u.Path); w != nil && w != p {
				overriddenBy[w.Ref()] = true
			}
		}
		for _, eu := range e.units {
			if eu.Source != p {
				continue
			}
			for _, q := range e.Policies {
				if q != p && q.losesTo(eu, cache) {
					overrides[q.Ref()] = true
				}
			}
		}
		for path, w := range e.lostTo {
			if w == p {
				for _, q := range e.Policies {
					if q != p && q.sets(path, cache) {
						overrides[q.Ref()] = true
					}
				}
			}
		}
		switch {
		case survived == len(mine):
			im.Enforced++
		case survived == 0:
			im.Overridden++
		default:
			im.PartiallyEnforced++
		}
	}
	switch {
	case im.Enforced == len(paths):
		im.Status = StatusEnforced
	case im.Overridden == len(paths):
		im.Status = StatusOverridden
	default:
		im.Status = StatusPartiallyEnforced
	}
	im.Overrides = sortedKeys(overrides)
	im.OverriddenBy = sortedKeys(overriddenBy)
	return im
}

// winner is the policy whose setting stands at path, or whose action removed it.
func (e *Effective) winner(path string) *Policy {
	if u, ok := e.units[path]; ok {
		return u.Source
	}
	for p, u := range e.units {
		if strings.HasPrefix(path, p+".") || strings.HasPrefix(p, path+".") {
			return u.Source
		}
	}
	return e.lostTo[path]
}

// losesTo reports whether q set the same setting as u (or one nested in or enclosing it)
// to another value, so that u's standing means q lost it.
func (q *Policy) losesTo(u Unit, cache *UnitCache) bool {
	for _, b := range cache.Blocks(q) {
		for _, qu := range cache.Units(q, b) {
			if qu.Path == u.Path && !sameValue(qu.Value, u.Value) {
				return true
			}
			if strings.HasPrefix(qu.Path, u.Path+".") || strings.HasPrefix(u.Path, qu.Path+".") {
				return true
			}
		}
	}
	return false
}

// sets reports whether q has a setting at path.
func (q *Policy) sets(path string, cache *UnitCache) bool {
	for _, b := range cache.Blocks(q) {
		for _, qu := range cache.Units(q, b) {
			if qu.Path == path {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Summary is the one sentence a person reads in `kubectl get -o yaml`, e.g. "Atomic
// defaults on Gateway infra/gw: enforced on 10 of 12 paths, overridden on 2 by infra/strict".
func (im Impact) Summary(p *Policy) string {
	what := describeStrategy(p)
	where := "its targets"
	if keys := uniqueKeys(p); len(keys) == 1 {
		where = keys[0].String()
	} else if len(keys) > 1 {
		where = fmt.Sprintf("%d targets", len(keys))
	}
	if im.Status == StatusNoTargets {
		return fmt.Sprintf("%s on %s: reaches no %s yet", what, where, pathNoun(p.Row, 2))
	}
	s := fmt.Sprintf("%s on %s: enforced on %d of %d %s", what, where, im.Enforced, im.Contexts, pathNoun(p.Row, im.Contexts))
	if im.PartiallyEnforced > 0 {
		s += fmt.Sprintf(", partially on %d", im.PartiallyEnforced)
	}
	if im.Overridden > 0 {
		s += fmt.Sprintf(", overridden on %d", im.Overridden)
	}
	if len(im.OverriddenBy) > 0 {
		s += " by " + refList(im.OverriddenBy, im.OverriddenByTotal)
	}
	if len(im.Overrides) > 0 {
		s += "; overrides " + refList(im.Overrides, im.OverridesTotal)
	}
	return s
}

// summaryRefs is how many policy names the one-sentence summary spells out.
const summaryRefs = 5

// refList joins the first few refs and counts the rest; total is the full length when
// refs was already cut (0 otherwise).
func refList(refs []string, total int) string {
	total = max(total, len(refs))
	if total <= summaryRefs {
		return strings.Join(refs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(refs[:summaryRefs], ", "), total-summaryRefs)
}

func describeStrategy(p *Policy) string {
	if p.Row.Class == Direct {
		return "Direct policy"
	}
	blocks := p.Blocks()
	if len(blocks) == 0 {
		return "Empty policy"
	}
	b := blocks[0]
	strategy := b.Strategy
	if strategy == "" {
		strategy = StrategyAtomic
	}
	return strings.ToUpper(strategy[:1]) + strategy[1:] + " " + string(b.Class)
}

// pathNoun counts context paths in sentences.
func pathNoun(_ *KindRow, n int) string {
	if n == 1 {
		return "path"
	}
	return "paths"
}
