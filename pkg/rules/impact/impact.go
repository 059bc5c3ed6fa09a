package impact

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Impact statuses (GEP-713 "Status reporting", plus NoTargets and NotServed).
const (
	StatusEnforced          = "Enforced"
	StatusPartiallyEnforced = "PartiallyEnforced"
	StatusOverridden        = "Overridden"
	StatusNoTargets         = "NoTargets"
	// StatusNotServed: every path the policy reaches runs through Gateways whose
	// GatewayClass no controller of its kind serves, so it takes effect nowhere.
	StatusNotServed = "NotServed"
)

// Impact is the predicted effect of one policy on the state it is judged against.
type Impact struct {
	Status            string `json:"status"`
	Contexts          int    `json:"contexts"`
	Enforced          int    `json:"enforced"`
	PartiallyEnforced int    `json:"partiallyEnforced"`
	Overridden        int    `json:"overridden"`
	// NotServed counts the paths left out of Contexts because no controller of the kind
	// serves the Gateways they run through.
	NotServed    int      `json:"notServed,omitempty"`
	Overrides    []string `json:"overrides"`
	OverriddenBy []string `json:"overriddenBy"`
	// OverridesTotal and OverriddenByTotal are set when an annotation lists only the first
	// MaxAnnotatedRefs of a longer list.
	OverridesTotal    int `json:"overridesTotal,omitempty"`
	OverriddenByTotal int `json:"overriddenByTotal,omitempty"`
	// ObservedAt is the newest creationTimestamp among the other policies the prediction
	// rests on (those in Overrides and OverriddenBy). It is a function of the state that
	// matters to this policy alone, the same on every replica and the same at CREATE (when
	// the policy has no creationTimestamp yet) as at a later UPDATE, so a dry-run apply of an
	// unchanged object yields the stored annotation (GitOps tools see no drift); absent when
	// the prediction rests on no other policy.
	ObservedAt string `json:"observedAt,omitempty"`
	// Ancestors is the prediction per ancestor, and under each per target, in GEP-5058's
	// vocabulary (Predict sets it; Of leaves it empty). AncestorsTotal is set when an
	// annotation lists only the first MaxAnnotatedAncestors.
	Ancestors      []AncestorStatus `json:"ancestors,omitempty"`
	AncestorsTotal int              `json:"ancestorsTotal,omitempty"`
	// selected are the attachment points of a policy with target selectors, as resolved
	// when the impact was computed (Summary names them).
	selected []policy.TargetKey
}

// MaxAnnotatedRefs bounds the policy lists of the impact annotation. A Gateway-level
// override can override thousands of route policies, and all annotations of an object
// together may not exceed 256 KiB: an unbounded list would make the API server refuse the
// very write the mutating webhook annotates.
const MaxAnnotatedRefs = 50

// ForAnnotation returns the impact as the mutating webhook writes it on p, for those who can
// read p: policies in other namespaces described as msgs allows (by default by kind and
// namespace only, each such description once), lists cut to MaxAnnotatedRefs (saying how
// long each was); ancestors and targets likewise (annotatedAncestors).
func (im Impact) ForAnnotation(p *policy.Policy, msgs *validation.Messages) Impact {
	im.Ancestors, im.AncestorsTotal = annotatedAncestors(im.Ancestors, p, msgs)
	im.Overrides = visibleRefs(im.Overrides, p, msgs)
	im.OverriddenBy = visibleRefs(im.OverriddenBy, p, msgs)
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

// visibleRefs rewrites the namespace/name references to policies of p's kind that msgs
// does not let p's readers see; refs are sorted, so a namespace's policies are adjacent.
func visibleRefs(refs []string, p *policy.Policy, msgs *validation.Messages) []string {
	out := refs[:0:0]
	for _, ref := range refs {
		namespace, name, _ := strings.Cut(ref, "/")
		if !msgs.Reveals(namespace, p.Namespace) {
			ref = msgs.Name(p.Row.Kind, namespace, name, p.Namespace)
		}
		if len(out) == 0 || out[len(out)-1] != ref {
			out = append(out, ref)
		}
	}
	return out
}

// Of computes a policy's impact: over every path it reaches, the effective policy of
// its kind, and whether each of its settings survives there. A setting survives only where
// the effective policy's source for it is p (GEP-713: the loser of a conflict is "NOT
// enforced" even when the winner happens to set the same value). Enforced: all survive on
// every path; Overridden: none survives anywhere. The snapshot must hold p. The work grows
// with the paths p reaches, not with the cluster.
func Of(snap topology.Snapshot, p *policy.Policy, cache *merge.Cache) Impact {
	return of(snap, p, cache, nil, nil)
}

// OfThrough is Of over the paths of p that pass through one attachment point (`explain
// --target`): what p does there, which a state holding only those paths answers alike.
func OfThrough(snap topology.Snapshot, p *policy.Policy, target policy.TargetKey, cache *merge.Cache) Impact {
	return of(snap, p, cache, through(snap, p, target), nil)
}

// predictThrough is OfThrough with the ancestors of Predict, over the same paths.
func predictThrough(snap topology.Snapshot, p *policy.Policy, target policy.TargetKey, cache *merge.Cache) Impact {
	rec := &pathRecord{}
	im := of(snap, p, cache, through(snap, p, target), rec)
	im.Ancestors = rec.ancestors(snap)
	rec.release()
	return im
}

// through keeps the paths of p that pass through target.
func through(snap topology.Snapshot, p *policy.Policy, target policy.TargetKey) func(topology.ContextPath) bool {
	keys := map[string]bool{}
	for _, c := range topology.PathsThrough(snap, p.Row, target) {
		keys[c.String()] = true
	}
	return func(c topology.ContextPath) bool { return keys[c.String()] }
}

// of is Of over the paths keep keeps (all when keep is nil). With rec, it also keeps each
// path and what became of p's settings there (Predict, Compare).
func of(snap topology.Snapshot, p *policy.Policy, cache *merge.Cache, keep func(topology.ContextPath) bool, rec *pathRecord) Impact {
	im := Impact{Overrides: []string{}, OverriddenBy: []string{}}
	p = asStored(snap, p)
	if cache == nil {
		cache = merge.NewCache()
	}
	buf := pathBuffers.Get().(*[]topology.ContextPath)
	paths, notServed := topology.AppendServedPathsOf(snap, p, (*buf)[:0])
	if keep != nil {
		paths = slices.DeleteFunc(paths, func(c topology.ContextPath) bool { return !keep(c) })
	}
	if rec != nil {
		// The record keeps the paths until its owner is done with them (release).
		rec.policy, rec.paths, rec.buf = p, paths, buf
		rec.outcomes = slices.Grow(rec.outcomes[:0], len(paths))
	} else {
		defer putPaths(buf, paths)
	}
	im.Contexts = len(paths)
	if keep == nil {
		im.NotServed = notServed // OfThrough counts what passes through its target only
	}
	if len(p.TargetSelectors()) > 0 {
		im.selected = topology.TargetKeys(snap, p)
	}
	if len(paths) == 0 {
		im.Status = StatusNoTargets
		if notServed > 0 && keep == nil {
			im.Status = StatusNotServed
		}
		return im
	}
	if reason := refused(p, snap); reason != "" {
		im.Overridden, im.Status = len(paths), StatusOverridden // applied nowhere
		if rec != nil {
			rec.refused = reason
			for range paths {
				rec.outcomes = append(rec.outcomes, outcomeOverridden)
			}
		}
		return im
	}
	var mine []merge.Setting
	for _, b := range cache.Blocks(p) {
		mine = append(mine, withoutItemKeys(cache.Settings(p, b))...)
	}
	overrides, overriddenBy := map[string]*policy.Policy{}, map[string]*policy.Policy{}
	e := &merge.Effective{}
	for _, path := range paths {
		e.Compute(snap, p.Row, path, cache)
		survived := 0
		for _, u := range mine {
			if got, ok := e.Setting(u.Path); ok && got.Source == p {
				survived++
				continue
			}
			if u.Value == nil && e.Winner(u.Path) == p {
				survived++ // a null that removes what is above it, and stands
				continue
			}
			if w := e.Winner(u.Path); w != nil && w != p {
				overriddenBy[w.Ref()] = w
			}
		}
		for eu := range e.Each {
			if eu.Source != p {
				continue
			}
			for _, q := range e.Policies {
				if q != p && losesTo(q, eu, cache) {
					overrides[q.Ref()] = q
				}
			}
		}
		for path, w := range e.LostTo {
			if w == p {
				for _, q := range e.Policies {
					if q != p && sets(q, path, cache) {
						overrides[q.Ref()] = q
					}
				}
			}
		}
		out := outcomePartial
		switch {
		case survived == len(mine):
			im.Enforced++
			out = outcomeEnforced
		case survived == 0:
			im.Overridden++
			out = outcomeOverridden
		default:
			im.PartiallyEnforced++
		}
		if rec != nil {
			rec.outcomes = append(rec.outcomes, out)
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
	var newest time.Time
	for _, related := range []map[string]*policy.Policy{overrides, overriddenBy} {
		for _, q := range related {
			if q.Created.After(newest) {
				newest = q.Created
			}
		}
	}
	im.ObservedAt = observedAt(newest)
	return im
}

func observedAt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// losesTo reports whether q set the same setting as u (or one nested in or enclosing it):
// u stands in the effective policy, so q's setting does not, whatever its value.
func losesTo(q *policy.Policy, u merge.Setting, cache *merge.Cache) bool {
	for _, b := range cache.Blocks(q) {
		for _, qu := range cache.Settings(q, b) {
			if qu.Path == u.Path || strings.HasPrefix(qu.Path, u.Path+".") || strings.HasPrefix(u.Path, qu.Path+".") {
				return true
			}
		}
	}
	return false
}

// sets reports whether q has a setting at path.
func sets(q *policy.Policy, path string, cache *merge.Cache) bool {
	for _, b := range cache.Blocks(q) {
		for _, qu := range cache.Settings(q, b) {
			if qu.Path == path {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[string]*policy.Policy) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Summary is the one sentence a person reads in `kubectl get -o yaml`, e.g. "Atomic
// defaults on Gateway infra/gw: enforced on 10 of 12 paths, overridden on 2 by infra/strict".
func (im Impact) Summary(p *policy.Policy) string {
	return im.summary(p, &validation.Messages{RevealOtherNamespaces: true})
}

// summary is Summary with a target that only a selector reached named as msgs allows.
func (im Impact) summary(p *policy.Policy, msgs *validation.Messages) string {
	what := describeStrategy(p)
	where := "its targets"
	keys := p.UniqueKeys()
	if len(p.TargetSelectors()) > 0 {
		keys = im.selected
	}
	if len(keys) == 1 {
		where = msgs.Target(keys[0], len(p.TargetSelectors()) > 0 && !slices.Contains(p.UniqueKeys(), keys[0]), p.Namespace)
	} else if len(keys) > 1 {
		where = fmt.Sprintf("%d targets", len(keys))
	}
	switch im.Status {
	case StatusNoTargets:
		return fmt.Sprintf("%s on %s: reaches no %s yet", what, where, pathNoun(p.Row, 2))
	case StatusNotServed:
		return fmt.Sprintf("%s on %s: takes no effect: no controller of %s serves the Gateways of its %d %s", what, where, p.Row.Kind, im.NotServed, pathNoun(p.Row, im.NotServed))
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
	if im.NotServed > 0 {
		s += fmt.Sprintf("; no effect on %d more %s, whose Gateways no controller of %s serves", im.NotServed, pathNoun(p.Row, im.NotServed), p.Row.Kind)
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

func describeStrategy(p *policy.Policy) string {
	if p.Row.Class == kinds.Direct {
		return "Direct policy"
	}
	blocks := p.Blocks()
	if len(blocks) == 0 {
		return "Empty policy"
	}
	b := blocks[0]
	strategy := b.Strategy
	if strategy == "" {
		strategy = kinds.StrategyAtomic
	}
	return strings.ToUpper(strategy[:1]) + strategy[1:] + " " + string(b.Class)
}

// pathNoun counts context paths in sentences.
func pathNoun(_ *kinds.KindRow, n int) string {
	if n == 1 {
		return "path"
	}
	return "paths"
}

// putPaths gives a path list back to pathBuffers.
func putPaths(buf *[]topology.ContextPath, paths []topology.ContextPath) {
	if cap(paths) <= maxPooledPaths {
		clear(paths[:cap(paths)]) // hold no objects a later snapshot may have dropped, duplicates included
		*buf = paths[:0]
		pathBuffers.Put(buf)
	}
}

// pathBuffers keep the path lists of impact computations for the next one: a path is 160
// bytes, and growing a fresh list for each review was a tenth of what the webhook allocated
// under load. Lists longer than maxPooledPaths are left to the collector.
var pathBuffers = sync.Pool{New: func() any { return new([]topology.ContextPath) }}

const maxPooledPaths = 1024

// asStored returns p as the snapshot holds it. The fold tells policies apart by pointer,
// and a caller may hold the policy it stored rather than the compact copy the snapshot
// keeps (index.Snapshot.PutPolicy): asked about that one, the walk would count the stored
// copy as another policy overriding it. One index lookup at p's first attachment point.
func asStored(snap topology.Snapshot, p *policy.Policy) *policy.Policy {
	var first policy.TargetKey
	switch {
	case len(p.TargetRefs) > 0:
		first = p.Key(p.TargetRefs[0])
	case len(p.TargetSelectors()) > 0:
		for _, q := range snap.SelectingPolicies(p.GroupKind()) {
			if q.Namespace == p.Namespace && q.Name == p.Name {
				return q
			}
		}
		return p
	default:
		return p
	}
	for _, q := range snap.PoliciesAt(p.GroupKind(), first) {
		if q.Namespace == p.Namespace && q.Name == p.Name {
			return q
		}
	}
	return p
}

// withoutItemKeys drops the key fields of keyed-list items that have other fields: those
// are the item's settings, and the key only names it (two policies writing the item
// perPort[port=8080] each write port: 8080, and whichever copy stands overrides nothing). An
// item of key fields alone is its key.
func withoutItemKeys(settings []merge.Setting) []merge.Setting {
	if !slices.ContainsFunc(settings, func(u merge.Setting) bool { return u.Key }) {
		return settings
	}
	var out []merge.Setting
	for _, u := range settings {
		if u.Key {
			item := u.ItemPath() + "."
			if slices.ContainsFunc(settings, func(o merge.Setting) bool { return !o.Key && strings.HasPrefix(o.Path, item) }) {
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// refused returns the reason the implementation refuses p whole in snap by a rule of its row
// the webhook denies (plain-HTTP listeners sharing a port, too many policies at a target, a
// reference field into another namespace that no ReferenceGrant admits), or "" when it does
// not: a
// state read from manifests or from a cluster where it was admitted anyway (Warn, or before
// the webhook) holds it, and the implementation applies it nowhere, so its impact is
// Overridden. The fold keeps it: Envoy Gateway's refused section policy still claims its
// listener from the Gateway-wide one (clienttrafficpolicy.go).
func refused(p *policy.Policy, snap topology.Snapshot) string {
	if p.Row.WholeHTTPPorts {
		if errs := validation.ValidateWholeHTTPPorts(p, snap, nil); len(errs) > 0 {
			return validation.ReasonOf(errs[0])
		}
	}
	if p.Row.MaxPoliciesPerTarget > 0 {
		if errs := validation.ValidatePoliciesPerTarget(p, snap, nil); len(errs) > 0 {
			return validation.ReasonOf(errs[0])
		}
	}
	if errs := validation.ValidateReferenceFieldGrants(p, snap); len(errs) > 0 {
		return validation.ReasonOf(errs[0])
	}
	return ""
}
