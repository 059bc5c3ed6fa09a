package impact

import (
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Reasons of the Accepted condition a GEP-5058 implementation writes per ancestor and per
// target (Gateway API's PolicyReasonAccepted and PolicyReasonTargetNotFound; GEP-5058's
// PartiallyAccepted: some targets under the ancestor are, some are not).
const (
	ReasonAccepted          = "Accepted"
	ReasonPartiallyAccepted = "PartiallyAccepted"
	ReasonTargetNotFound    = "TargetNotFound"
)

// Bounds of the ancestors in the annotation and the Reports: Gateway API's CRDs allow 16
// entries in status.ancestors, and GEP-5058 16 targets under each.
const (
	MaxAnnotatedAncestors = 16
	MaxAnnotatedTargets   = 16
)

// maxAncestorRoutes bounds the routes read to find the Gateways above a Direct policy's
// route or backend target (the ancestors an implementation writes status on): a Service
// many routes send to would otherwise make one prediction read them all.
const maxAncestorRoutes = 256

// ObjectRef names an object, or a section of one, as Gateway API's references do (a
// ParentReference as ancestorRef, GEP-5058's NamespacedPolicyTargetReferenceWithSectionName
// as targetRef).
type ObjectRef struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

func refOf(k policy.TargetKey) ObjectRef {
	return ObjectRef{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, SectionName: k.Section}
}

func (r ObjectRef) key() policy.TargetKey {
	return policy.TargetKey{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Section: r.SectionName}
}

// String names the object for people: "Gateway infra/gw", "Service app/b1 section https",
// "a Gateway in namespace "infra"" when its name is not shown.
func (r ObjectRef) String() string {
	if r.Name == "" && r.Kind != "" {
		return (&validation.Messages{}).Name(r.Kind, r.Namespace, "", "\x00")
	}
	return r.key().String()
}

// AncestorStatus is the predicted status of a policy with respect to one ancestor, in
// GEP-5058's shape: the Gateway under which its settings take effect (Gateway API: "SHOULD
// use Gateway as the PolicyAncestorStatus object"), with each of the policy's targets under
// it. Accepted is the reason of the Accepted condition a GEP-5058 implementation would
// write there: Accepted (every target under it is), PartiallyAccepted (some are),
// TargetNotFound (none is found), or the webhook's reason when the implementation refuses
// the policy whole. Status is the impact over the paths under the ancestor.
type AncestorStatus struct {
	AncestorRef ObjectRef      `json:"ancestorRef"`
	Accepted    string         `json:"accepted"`
	Status      string         `json:"status"`
	Contexts    int            `json:"contexts"`
	Targets     []TargetStatus `json:"targets"`
	// TargetsTotal is set when an annotation lists only the first MaxAnnotatedTargets.
	TargetsTotal int `json:"targetsTotal,omitempty"`
	// named: the policy's own namespace names the ancestor (the policy targets it, or a route
	// there attaches to it), so its readers may see its name whatever the tenant rules.
	named bool
}

// TargetStatus is the predicted status of a policy at one of its targets under one
// ancestor (GEP-5058's PolicyTargetStatus): Accepted is Accepted, TargetNotFound (the
// object, or its section, does not exist) or the webhook's reason for a refusal, Status the
// impact over the target's paths under the ancestor.
type TargetStatus struct {
	TargetRef ObjectRef `json:"targetRef"`
	Accepted  string    `json:"accepted"`
	Status    string    `json:"status"`
	Contexts  int       `json:"contexts"`
}

// outcome is what became of a policy's settings on one path.
type outcome uint8

const (
	outcomeEnforced outcome = iota
	outcomePartial
	outcomeOverridden
)

// pathRecord is a policy's paths, each with its outcome, as of computed them. The paths are
// a pooled buffer: release gives it back once the record is read.
type pathRecord struct {
	policy   *policy.Policy
	paths    []topology.ContextPath
	buf      *[]topology.ContextPath
	outcomes []outcome
	// refused is the reason the implementation refuses the policy whole ("" if not).
	refused string
}

// release gives the record's paths back to the pool; the record is empty after.
func (r *pathRecord) release() {
	if r.buf != nil {
		putPaths(r.buf, r.paths)
	}
	r.paths, r.buf = nil, nil
}

// tally counts outcomes into an impact status.
type tally struct{ enforced, partial, overridden int }

func (t *tally) add(o outcome) {
	switch o {
	case outcomeEnforced:
		t.enforced++
	case outcomeOverridden:
		t.overridden++
	default:
		t.partial++
	}
}

func (t tally) contexts() int { return t.enforced + t.partial + t.overridden }

func (t tally) status() string {
	switch n := t.contexts(); {
	case n == 0:
		return StatusNoTargets
	case t.enforced == n:
		return StatusEnforced
	case t.overridden == n:
		return StatusOverridden
	default:
		return StatusPartiallyEnforced
	}
}

// over tallies the recorded paths keep keeps (all when keep is nil).
func (r *pathRecord) over(keep func(topology.ContextPath) bool) tally {
	var t tally
	for i, c := range r.paths {
		if keep == nil || keep(c) {
			t.add(r.outcomes[i])
		}
	}
	return t
}

// Predict is Of with the per-ancestor, per-target view of GEP-5058 (Impact.Ancestors): what
// the mutating webhook writes and `explain` and the Reports show.
func Predict(snap topology.Snapshot, p *policy.Policy, cache *merge.Cache) Impact {
	rec := &pathRecord{}
	im := of(snap, p, cache, nil, rec)
	im.Ancestors = rec.ancestors(snap)
	rec.release()
	return im
}

// ancestors groups the recorded paths by the Gateway above them and by the target they come
// from. A path's ancestor is its Gateway; a Direct policy's paths that start below one (a
// route, a backend) are under the Gateways the route, or the routes sending to the backend,
// attach to, or else under their own first object. A target with no path is listed, as not
// found or reaching nothing yet, under its own Gateway when it is or has one, else under
// every ancestor of the policy (GEP-5058's example lists a missing Service under the
// policy's Gateway).
func (r *pathRecord) ancestors(snap topology.Snapshot) []AncestorStatus {
	p := r.policy
	targets := slices.DeleteFunc(topology.TargetKeys(snap, p), func(k policy.TargetKey) bool {
		_, ok := p.Row.Target(k.Group, k.Kind)
		return !ok // a kind the implementation does not attach this kind of policy to
	})
	// owner[i] lists the targets (indexes into targets) path i comes from; nil when the
	// policy has one target, which every path comes from.
	var owner [][]int
	if len(targets) > 1 {
		owner = make([][]int, len(r.paths))
		index := make(map[topology.ContextPath]int, len(r.paths))
		for i, c := range r.paths {
			index[c] = i
		}
		for t, k := range targets {
			for _, c := range topology.PathsThrough(snap, p.Row, k) {
				if i, ok := index[c]; ok && !slices.Contains(owner[i], t) {
					owner[i] = append(owner[i], t)
				}
			}
		}
	}
	// A group is one ancestor: its paths' tally, and a tally per target listed under it
	// (listed[t]: the target is, even with no path).
	type targetTally struct {
		tally
		listed bool
	}
	type group struct {
		ref     policy.TargetKey
		all     tally
		targets []targetTally
		named   bool
	}
	var groups []*group
	find := func(k policy.TargetKey) *group {
		for _, g := range groups {
			if g.ref == k {
				return g
			}
		}
		g := &group{ref: k, targets: make([]targetTally, len(targets))}
		groups = append(groups, g)
		return g
	}
	single := []int{0}
	finder := ancestorFinder{snap: snap, routesLeft: maxAncestorRoutes, namespace: p.Namespace}
	reached := make([]bool, len(targets))
	for i, c := range r.paths {
		from := single
		if owner != nil {
			from = owner[i]
		}
		if len(targets) == 0 {
			from = nil
		}
		for _, a := range finder.of(c) {
			g := find(a)
			g.all.add(r.outcomes[i])
			g.named = g.named || (c.Route != nil && c.Route.Namespace == p.Namespace && c.Set == nil) || a.Namespace == p.Namespace || finder.namedHere(a)
			for _, t := range from {
				reached[t] = true
				g.targets[t].listed = true
				g.targets[t].add(r.outcomes[i])
			}
		}
	}
	for t, k := range targets {
		if reached[t] {
			continue
		}
		own := ownAncestors(snap, k)
		if len(own) == 0 {
			for _, g := range groups {
				g.targets[t].listed = true
			}
			continue
		}
		for _, a := range own {
			find(a).targets[t].listed = true
		}
	}
	out := make([]AncestorStatus, 0, len(groups))
	for _, g := range groups {
		a := AncestorStatus{AncestorRef: refOf(g.ref), Status: g.all.status(), Contexts: g.all.contexts(), named: g.named}
		a.Targets = make([]TargetStatus, 0, len(targets))
		accepted, notAccepted, reason := 0, 0, ""
		for t, k := range targets {
			if !g.targets[t].listed {
				continue
			}
			if k.Object() == g.ref {
				a.named = true // the policy targets its ancestor
			}
			tl := g.targets[t].tally
			ts := TargetStatus{TargetRef: refOf(k), Accepted: ReasonAccepted, Status: tl.status(), Contexts: tl.contexts()}
			switch {
			case r.refused != "":
				ts.Accepted = r.refused
			case tl.contexts() == 0 && missing(snap, p, k):
				ts.Accepted = ReasonTargetNotFound
			}
			if ts.Accepted == ReasonAccepted {
				accepted++
			} else {
				notAccepted++
				if reason == "" || reason == ts.Accepted {
					reason = ts.Accepted
				} else {
					reason = ReasonTargetNotFound
				}
			}
			a.Targets = append(a.Targets, ts)
		}
		switch {
		case notAccepted == 0:
			a.Accepted = ReasonAccepted
		case accepted == 0:
			a.Accepted = reason
		default:
			a.Accepted = ReasonPartiallyAccepted
		}
		out = append(out, a)
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b AncestorStatus) int {
			return strings.Compare(a.AncestorRef.key().String(), b.AncestorRef.key().String())
		})
	}
	return out
}

// missing reports whether the snapshot lacks p's target k, or its section, as
// validation.WarnMissingTargets warns of it (a kind the webhook does not read is not missing).
func missing(snap topology.Snapshot, p *policy.Policy, k policy.TargetKey) bool {
	target, _ := p.Row.Target(k.Group, k.Kind)
	return validation.Missing(snap, target, k) != ""
}

// ownAncestors returns the Gateway a target with no path is or belongs to: a Gateway
// itself, a ListenerSet's Gateway, the Gateways a route attaches to.
func ownAncestors(snap topology.Snapshot, k policy.TargetKey) []policy.TargetKey {
	o, ok := snap.Object(k.Object())
	if !ok {
		return nil
	}
	f := ancestorFinder{snap: snap, routesLeft: maxAncestorRoutes}
	switch {
	case o.Gateway != nil && o.Gateway.Parent == nil:
		return []policy.TargetKey{o.Key()}
	case o.Gateway != nil:
		return []policy.TargetKey{gatewayKey(*o.Gateway.Parent)}
	case o.Route != nil:
		return f.ofRoute(o, nil)
	}
	return nil
}

func gatewayKey(k policy.TargetKey) policy.TargetKey {
	return policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: k.Namespace, Name: k.Name}
}

// ancestorFinder finds the ancestors of paths, reading at most routesLeft routes for those
// that start below a Gateway. With namespace, it also notes the Gateways a route there names
// in its own parentRefs (namedHere).
type ancestorFinder struct {
	snap       topology.Snapshot
	routesLeft int
	namespace  string
	byRoute    map[policy.TargetKey][]policy.TargetKey
	named      []policy.TargetKey
	buf        []policy.TargetKey
}

// namedHere reports whether a route in the finder's namespace names Gateway k as a parent.
func (f *ancestorFinder) namedHere(k policy.TargetKey) bool { return slices.Contains(f.named, k) }

// of returns the ancestors of one path, in a buffer the next call reuses.
func (f *ancestorFinder) of(c topology.ContextPath) []policy.TargetKey {
	out := f.buf[:0]
	switch {
	case c.Gateway != nil:
		out = append(out, c.Gateway.Key())
	case c.Route != nil:
		if out = f.ofRoute(c.Route, out); len(out) == 0 {
			out = append(out, c.Route.Key())
		}
	default:
		if out = f.ofBackend(c.Backend, out); len(out) == 0 {
			out = append(out, c.Backend)
		}
	}
	f.buf = out
	return out
}

// ofBackend appends to into the Gateways of the routes that send to backend. (A function
// of its own: the loop over the iterator captures what it appends to, which would move
// every path's buffer to the heap.)
func (f *ancestorFinder) ofBackend(backend policy.TargetKey, into []policy.TargetKey) []policy.TargetKey {
	for route := range f.snap.RoutesByBackend(backend) {
		if f.routesLeft <= 0 {
			break
		}
		into = f.ofRoute(route, into)
	}
	return into
}

// ofRoute appends to into the Gateways route attaches to (through a ListenerSet, its
// Gateway), each once.
func (f *ancestorFinder) ofRoute(route *topology.Object, into []policy.TargetKey) []policy.TargetKey {
	gws, ok := f.byRoute[route.Key()]
	if !ok {
		f.routesLeft--
		for _, a := range topology.RouteAttachments(f.snap, route) {
			if len(a.Listeners) == 0 {
				continue
			}
			k := a.Ref.Key()
			direct := true
			if o, ok := f.snap.Object(k.Object()); ok && o.Gateway != nil && o.Gateway.Parent != nil {
				k, direct = *o.Gateway.Parent, false
			}
			if k = gatewayKey(k); !slices.Contains(gws, k) {
				gws = append(gws, k)
			}
			if direct && f.namespace != "" && route.Namespace == f.namespace && !slices.Contains(f.named, k) {
				f.named = append(f.named, k)
			}
		}
		if f.byRoute == nil {
			f.byRoute = map[policy.TargetKey][]policy.TargetKey{}
		}
		f.byRoute[route.Key()] = gws
	}
	for _, k := range gws {
		if !slices.Contains(into, k) {
			into = append(into, k)
		}
	}
	return into
}

// annotatedAncestors is ancestors as a policy's readers may see them (ForAnnotation): an
// ancestor in another namespace that the policy's own namespace does not name is shown by
// kind and namespace (its name left empty) unless msgs reveals it, a target a selector
// reached there likewise; lists cut to MaxAnnotatedAncestors and MaxAnnotatedTargets.
func annotatedAncestors(ancestors []AncestorStatus, p *policy.Policy, msgs *validation.Messages) ([]AncestorStatus, int) {
	total := 0
	if len(ancestors) > MaxAnnotatedAncestors {
		total = len(ancestors)
		ancestors = ancestors[:MaxAnnotatedAncestors:MaxAnnotatedAncestors]
	}
	var own []policy.TargetKey
	copied := false
	for i := range ancestors {
		a := ancestors[i]
		hide := !a.named && !msgs.Reveals(a.AncestorRef.Namespace, p.Namespace)
		cutTargets := len(a.Targets) > MaxAnnotatedTargets
		var hideTarget []bool
		for j, t := range a.Targets {
			if msgs.Reveals(t.TargetRef.Namespace, p.Namespace) {
				continue
			}
			if own == nil {
				own = p.UniqueKeys()
			}
			if !slices.Contains(own, t.TargetRef.key()) {
				if hideTarget == nil {
					hideTarget = make([]bool, len(a.Targets))
				}
				hideTarget[j] = true // a selector reached it in another namespace
			}
		}
		if !hide && !cutTargets && hideTarget == nil {
			continue
		}
		if !copied {
			ancestors, copied = slices.Clone(ancestors), true
		}
		if hide {
			a.AncestorRef.Name = ""
		}
		targets := slices.Clone(a.Targets)
		for j := range targets {
			if hideTarget != nil && hideTarget[j] {
				targets[j].TargetRef.Name = ""
			}
		}
		if cutTargets {
			a.TargetsTotal = len(targets)
			targets = targets[:MaxAnnotatedTargets:MaxAnnotatedTargets]
		}
		a.Targets = targets
		ancestors[i] = a
	}
	return ancestors, total
}
