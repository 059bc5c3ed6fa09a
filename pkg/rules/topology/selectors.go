package topology

import (
	"iter"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Label-selector targets (Envoy Gateway's, kgateway's, agentgateway's targetSelectors) are
// resolved against the snapshot when asked, never stored: a label written to a route later
// moves the policy at once, in the webhook's store as in `check`.
//
// Envoy Gateway resolves a selector to the objects of its group and kind, in the namespaces
// it names (the policy's own by default, all, or those whose labels match), whose labels
// match; a selected object in another namespace counts only when a ReferenceGrant there
// admits the policy's kind (internal/gatewayapi/helpers.go, resolvePolicyTargetsFromSelectors,
// at commit d32f2829). The webhook applies the same to every kind with selectors: without a
// grant, fewer targets, so fewer conflicts, never a denial the implementation would not see.

// Target is one attachment point of a policy, named by a reference or selected by a selector.
type Target struct {
	Key policy.TargetKey
	// Path is the reference or selector that reaches Key, for messages.
	Path *field.Path
	// Selected says a selector reached Key.
	Selected bool
}

// Targets returns the distinct attachment points of p: those its references name, in
// order, then those its selectors select now.
func Targets(snap Snapshot, p *policy.Policy) []Target { return AppendTargets(snap, p, nil) }

// AppendTargets is Targets appending to into: the conflict rule passes a buffer on its
// stack, as most policies have a reference or two and no selector.
func AppendTargets(snap Snapshot, p *policy.Policy, into []Target) []Target {
	start := len(into)
	var seen map[policy.TargetKey]bool // a long list of references is not scanned pairwise
	if len(p.TargetRefs) > pairwiseUpTo {
		seen = make(map[policy.TargetKey]bool, len(p.TargetRefs))
	}
	for _, ref := range p.TargetRefs {
		key := p.Key(ref)
		if seen != nil {
			if seen[key] {
				continue
			}
			seen[key] = true
		} else if hasTarget(into[start:], key) {
			continue
		}
		into = append(into, Target{Key: key, Path: ref.Path})
	}
	if len(p.TargetSelectors()) > 0 {
		for _, t := range selectedTargets(snap, p) {
			if !hasTarget(into[start:], t.Key) {
				into = append(into, t)
			}
		}
	}
	return into
}

// selectedTargets returns what p's selectors select now (apart so that the iterator's
// closures, which move what they capture to the heap, never hold a caller's buffer).
func selectedTargets(snap Snapshot, p *policy.Policy) []Target {
	var out []Target
	for i := range p.TargetSelectors() {
		sel := &p.TargetSelectors()[i]
		for o, granted := range Selected(snap, p, sel) {
			if key := selectedKey(o, sel); granted && !hasTarget(out, key) {
				out = append(out, Target{Key: key, Path: sel.Path, Selected: true})
			}
		}
	}
	return out
}

func hasTarget(targets []Target, key policy.TargetKey) bool {
	for _, t := range targets {
		if t.Key == key {
			return true
		}
	}
	return false
}

// TargetKeys returns the keys of Targets.
func TargetKeys(snap Snapshot, p *policy.Policy) []policy.TargetKey {
	if len(p.TargetSelectors()) == 0 {
		return p.UniqueKeys()
	}
	targets := Targets(snap, p)
	out := make([]policy.TargetKey, len(targets))
	for i, t := range targets {
		out[i] = t.Key
	}
	return out
}

func selectedKey(o *Object, sel *policy.TargetSelector) policy.TargetKey {
	key := o.Key()
	key.Section = sel.SectionName
	return key
}

// Selected yields the objects selector sel of p selects now, each with whether it counts
// (same namespace, or a ReferenceGrant admits p there). It looks objects up by the
// selector's label with the fewest values to look up, and only a selector without one
// (only Exists, NotIn, DoesNotExist, or nothing) reads every object of its kind.
func Selected(snap Snapshot, p *policy.Policy, sel *policy.TargetSelector) iter.Seq2[*Object, bool] {
	gk := schema.GroupKind{Group: sel.Group, Kind: sel.Kind}
	return func(yield func(*Object, bool) bool) {
		visit := func(o *Object) bool {
			if !inScope(snap, p, sel, o) {
				return true
			}
			return yield(o, granted(snap, p, o))
		}
		req, ok := lookupRequirement(sel.Labels)
		if !ok {
			for o := range snap.ObjectsOfKind(gk) {
				if !visit(o) {
					return
				}
			}
			return
		}
		for _, v := range req.Values().UnsortedList() {
			for o := range snap.ObjectsLabelled(gk, req.Key(), v) {
				if !visit(o) {
					return
				}
			}
		}
	}
}

// lookupRequirement returns the requirement of a selector that names the fewest values an
// object must carry (= or in), if any.
func lookupRequirement(sel labels.Selector) (labels.Requirement, bool) {
	reqs, _ := sel.Requirements()
	best, found := labels.Requirement{}, false
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			if !found || r.Values().Len() < best.Values().Len() {
				best, found = r, true
			}
		}
	}
	return best, found
}

// AppendSelecting appends to named (the policies of kind whose references name key) those
// whose selectors select the object at key now, each once; named itself is never changed.
func AppendSelecting(snap Snapshot, kind schema.GroupKind, key policy.TargetKey, named []*policy.Policy) []*policy.Policy {
	selecting := snap.SelectingPolicies(kind)
	if len(selecting) == 0 {
		return named
	}
	o, ok := snap.Object(key.Object())
	if !ok {
		return named
	}
	out := named
	for _, q := range selecting {
		if slices.Contains(out, q) || !selects(snap, q, key, o) {
			continue
		}
		if len(out) == len(named) {
			out = append(named[:len(named):len(named)], q) // copies: named belongs to the index
			continue
		}
		out = append(out, q)
	}
	return out
}

// selects reports whether one of q's selectors selects o, at key's section, now.
func selects(snap Snapshot, q *policy.Policy, key policy.TargetKey, o *Object) bool {
	for i := range q.TargetSelectors() {
		sel := &q.TargetSelectors()[i]
		if sel.SectionName == key.Section && inScope(snap, q, sel, o) && granted(snap, q, o) {
			return true
		}
	}
	return false
}

// inScope reports whether sel selects o, ReferenceGrants aside: its group and kind, a
// namespace the selector names, and labels that match.
func inScope(snap Snapshot, p *policy.Policy, sel *policy.TargetSelector, o *Object) bool {
	if o.Group != sel.Group || o.Kind != sel.Kind {
		return false
	}
	if o.Namespace != "" && sel.From != policy.SelectAllNamespaces && sel.From != policy.SelectNamespaces && o.Namespace != p.Namespace {
		return false // Same, the default
	}
	if !sel.Labels.Matches(o.Labels()) {
		return false
	}
	if o.Namespace != "" && sel.From == policy.SelectNamespaces {
		return sel.Namespaces.Matches(labels.Set(NamespaceLabels(snap, o.Namespace)))
	}
	return true
}

// granted reports whether p may attach to o: o in p's namespace (or cluster-scoped), or a
// ReferenceGrant in o's namespace admits p's kind.
func granted(snap Snapshot, p *policy.Policy, o *Object) bool {
	return o.Namespace == "" || o.Namespace == p.Namespace || Granted(snap, p, o.Namespace, o.Group, o.Kind, o.Name)
}
