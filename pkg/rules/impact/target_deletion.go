package impact

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Deleting a target (a Gateway, a ListenerSet, an xRoute, a Service) can strand the
// policies attached along its paths: nothing in the API refuses it, and controllers report
// the result later, if at all, in statuses few read. TargetDeletionOf answers before the
// object goes, on a view of the snapshot without it (the same what-if as WithPolicy, the
// other way round):
//
//   - policies attached to the target (by reference or selector) that have no other target
//     that exists: they apply nowhere (Stranded);
//   - policies whose targets remain but lie on no path any more: a route attached only to the
//     deleted Gateway, a ListenerSet of it, a Service only routes of it sent to (Unreached);
//   - on the paths that remain (those to a deleted Service: the routes still name it), the
//     effective policy of each kind that changes, and what applies instead (Changed).
//
// A policy that only loses some of its paths (a Gateway's default when one of its routes
// is deleted) still applies where it did, and is not reported. What is found depends on
// which policies exist, where they attach and which settings they set, never on a value
// of another namespace's policy; a message names and quotes those only as msgs allows.

// TargetDeletion is what deleting one target object does to the policies around it.
type TargetDeletion struct {
	// Target is the object deleted (no section).
	Target policy.TargetKey
	// Stranded are the policies attached to the target with no other target that exists;
	// Unreached those whose remaining targets no path reaches without it. Both apply
	// nowhere after the deletion. Sorted by kind, namespace and name.
	Stranded, Unreached []*policy.Policy
	// Changed are, per policy kind, the remaining paths whose effective policy changes.
	Changed []ChangedPaths
}

// ChangedPaths is a set of remaining paths of one policy kind on which the effective policy
// changes the same way.
type ChangedPaths struct {
	Row   *kinds.KindRow
	Paths int
	// Lost are the policies that supplied a setting on these paths and no longer do.
	Lost []*policy.Policy
	// Instead is the effective policy after the deletion (empty: nothing of the kind applies).
	Instead []merge.Shown
	// sources are Instead's policies, by reference, for naming them.
	sources map[string]*policy.Policy
}

// Empty reports whether the deletion changes nothing for any policy.
func (d TargetDeletion) Empty() bool {
	return len(d.Stranded) == 0 && len(d.Unreached) == 0 && len(d.Changed) == 0
}

// Policies counts the distinct policies the deletion affects.
func (d TargetDeletion) Policies() int {
	seen := map[*policy.Policy]bool{}
	for _, p := range d.Stranded {
		seen[p] = true
	}
	for _, p := range d.Unreached {
		seen[p] = true
	}
	for _, c := range d.Changed {
		for _, p := range c.Lost {
			seen[p] = true
		}
	}
	return len(seen)
}

// TargetDeletionOf computes what deleting the object at target does, on snap as it is
// now. The work follows the objects below the target (its ListenerSets, the routes attached
// to it, their backends) and the kinds that may attach to each, never the whole cluster.
func TargetDeletionOf(snap topology.Snapshot, table *kinds.KindTable, target policy.TargetKey) TargetDeletion {
	target = target.Object()
	d := TargetDeletion{Target: target}
	obj, ok := snap.Object(target)
	if !ok {
		return d // not known: nothing to say about it
	}
	without := &withoutObject{Snapshot: snap, key: target}
	own := keysOf(obj)
	below := objectsBelow(snap, obj)
	belowKeys := make([][]policy.TargetKey, len(below))
	for i, o := range below {
		belowKeys[i] = keysOf(o)
	}
	holds, _ := snap.(policyKinds)
	for _, row := range table.Rows() {
		gk := row.GroupKind()
		if holds != nil && !holds.MayHoldPoliciesOf(gk) {
			continue // most kinds of the table have no policy in a cluster
		}
		attached := map[*policy.Policy]bool{}
		if _, ok := row.Target(obj.Group, obj.Kind); ok {
			for _, key := range own {
				for _, p := range snap.PoliciesAt(gk, key) {
					attached[p] = true
				}
			}
		}
		others := map[*policy.Policy]bool{}
		for i, o := range below {
			if _, ok := row.Target(o.Group, o.Kind); !ok {
				continue
			}
			for _, key := range belowKeys[i] {
				for _, p := range snap.PoliciesAt(gk, key) {
					if !attached[p] {
						others[p] = true
					}
				}
			}
		}
		for p := range attached {
			if !hasTarget(without, p) {
				d.Stranded = append(d.Stranded, p)
			} else if reaches(snap, p) && !reaches(without, p) {
				d.Unreached = append(d.Unreached, p)
			}
		}
		for p := range others {
			if reaches(snap, p) && !reaches(without, p) {
				d.Unreached = append(d.Unreached, p)
			}
		}
		d.Changed = append(d.Changed, changedPaths(snap, without, row, obj)...)
	}
	sortPolicies(d.Stranded)
	sortPolicies(d.Unreached)
	return d
}

// policyKinds is what a snapshot may tell of the kinds it holds policies of (index.Snapshot
// does): a review that looks up every kind at every object below a Gateway skips the rest.
type policyKinds interface {
	MayHoldPoliciesOf(kind schema.GroupKind) bool
}

// changedPaths folds the effective policy of row on each path through the deleted object
// that remains after it: only the paths to a backend do (the routes that name it remain;
// a path through a deleted Gateway, ListenerSet or route is gone, and a Direct policy's
// path is its target itself). Paths that change alike are grouped.
func changedPaths(snap, without topology.Snapshot, row *kinds.KindRow, obj *topology.Object) []ChangedPaths {
	if obj.Service == nil || row.Class == kinds.Direct || row.PathDepth() < kinds.DepthBackend {
		return nil
	}
	cache := merge.NewCache()
	var out []ChangedPaths
	index := map[string]int{}
	for _, c := range topology.PathsThrough(snap, row, obj.Key()) {
		before := merge.Fold(snap, row, c, cache)
		after := merge.Fold(without, row, c, cache)
		_, was := before.Display()
		_, now := after.Display()
		if sameSources(was, now) {
			continue
		}
		var lost []*policy.Policy
		for _, p := range before.Policies {
			if suppliedBy(was, p) && !suppliedBy(now, p) {
				lost = append(lost, p)
			}
		}
		id := signature(now) + "|" + policyRefs(lost)
		if i, ok := index[id]; ok {
			out[i].Paths++
			continue
		}
		sources := map[string]*policy.Policy{}
		for _, p := range after.Policies {
			sources[p.Ref()] = p
		}
		index[id] = len(out)
		out = append(out, ChangedPaths{Row: row, Paths: 1, Lost: lost, Instead: now, sources: sources})
	}
	return out
}

// sameSources compares two effective policies by their settings' names and the policies
// that supply them, never by value (a verdict must not turn on another namespace's value).
func sameSources(a, b []merge.Shown) bool {
	return slices.EqualFunc(a, b, func(x, y merge.Shown) bool { return x.Name == y.Name && x.Source == y.Source })
}

func suppliedBy(shown []merge.Shown, p *policy.Policy) bool {
	ref := p.Ref()
	return slices.ContainsFunc(shown, func(s merge.Shown) bool { return s.Source == ref })
}

func signature(shown []merge.Shown) string {
	var b strings.Builder
	for _, s := range shown {
		b.WriteString(s.Name + "=" + s.Source + ";")
	}
	return b.String()
}

func policyRefs(ps []*policy.Policy) string {
	refs := make([]string, len(ps))
	for i, p := range ps {
		refs[i] = p.Ref()
	}
	return strings.Join(refs, ",")
}

// objectsBelow returns the objects whose place in the hierarchy hangs on obj: a Gateway's
// ListenerSets, the routes attached to it or to them, and those routes' backends; a
// ListenerSet's routes and their backends; a route's backends. Each once.
func objectsBelow(snap topology.Snapshot, obj *topology.Object) []*topology.Object {
	var out []*topology.Object
	seen := map[policy.TargetKey]bool{obj.Key(): true}
	add := func(o *topology.Object) bool {
		if seen[o.Key()] {
			return false
		}
		seen[o.Key()] = true
		out = append(out, o)
		return true
	}
	addBackends := func(route *topology.Object) {
		for b := range route.Route.AllBackends() {
			if o, ok := snap.Object(b.Key()); ok {
				add(o)
			}
		}
	}
	addRoutes := func(parent policy.TargetKey) {
		for route := range snap.RoutesByParent(parent) {
			if add(route) {
				addBackends(route)
			}
		}
	}
	switch {
	case obj.Gateway != nil:
		addRoutes(obj.Key())
		if obj.Gateway.Parent == nil {
			for _, set := range snap.ListenerSetsByGateway(obj.Key()) {
				if add(set) {
					addRoutes(set.Key())
				}
			}
		}
	case obj.Route != nil:
		addBackends(obj)
	}
	return out
}

// keysOf returns the attachment points of an object: itself and each of its sections
// (listeners, named route rules, Service ports by name or number).
func keysOf(o *topology.Object) []policy.TargetKey {
	key := o.Key()
	out := []policy.TargetKey{key}
	section := func(name string) {
		if name != "" {
			k := key
			k.Section = name
			out = append(out, k)
		}
	}
	switch {
	case o.Gateway != nil:
		for _, l := range o.Gateway.Listeners {
			section(l.Name)
		}
	case o.Route != nil:
		for i := range o.Route.Rules {
			section(o.Route.RuleName(i))
		}
	case o.Service != nil:
		for _, p := range o.Service.Ports {
			if p.Name != "" {
				section(p.Name)
			} else {
				section(fmt.Sprint(p.Port))
			}
		}
	}
	return out
}

// hasTarget reports whether one of p's targets exists in snap. A kind the webhook does not
// read from the cluster (a GatewayClass, an InferencePool) is taken to exist.
func hasTarget(snap topology.Snapshot, p *policy.Policy) bool {
	for _, key := range topology.TargetKeys(snap, p) {
		info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
		if !info.Watched {
			return true
		}
		if _, ok := snap.Object(key.Object()); ok {
			return true
		}
	}
	return false
}

// reaches reports whether one of p's targets takes a place in the hierarchy in snap: a
// GatewayClass or Namespace (roots: a Gateway may come), a Gateway that exists, a
// ListenerSet its Gateway accepts, a route attached to a listener, a backend such a route
// sends to. Whether anything lies below the target does not matter: a Gateway's policy
// with no route yet still attaches.
func reaches(snap topology.Snapshot, p *policy.Policy) bool {
	for _, key := range topology.TargetKeys(snap, p) {
		info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
		row, ok := placeRows[info.Role]
		if !ok {
			return true // GatewayClass, Namespace
		}
		if len(topology.PathsThrough(snap, row, key)) > 0 {
			return true
		}
	}
	return false
}

// placeRows are the rows whose paths end at each role's own level: a path through a target
// at its depth is the target's place in the hierarchy.
var placeRows = map[kinds.Role]*kinds.KindRow{
	kinds.RoleGateway:     {Class: kinds.Inherited, EffectiveTarget: "Gateway"},
	kinds.RoleListenerSet: {Class: kinds.Inherited, EffectiveTarget: "Listener"},
	kinds.RoleRoute:       {Class: kinds.Inherited, EffectiveTarget: "Route"},
	kinds.RoleBackend:     {Class: kinds.Inherited, EffectiveTarget: "Backend"},
	"":                    {Class: kinds.Inherited, EffectiveTarget: "Backend"},
}

// sortPolicies orders policies by kind, namespace and name (index.Snapshot.Policies' order),
// each key built once.
func sortPolicies(ps []*policy.Policy) {
	type keyed struct {
		kind, ref string
		p         *policy.Policy
	}
	ks := make([]keyed, len(ps))
	for i, p := range ps {
		ks[i] = keyed{kinds.QualifiedKind(p.Row.Group, p.Row.Kind), p.Ref(), p}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := strings.Compare(a.kind, b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.ref, b.ref)
	})
	for i, k := range ks {
		ps[i] = k.p
	}
}

// withoutObject is a snapshot without one object: nothing finds it, and no policy attaches
// at it (a policy whose target does not exist applies nowhere).
type withoutObject struct {
	topology.Snapshot
	key policy.TargetKey
}

func (w *withoutObject) Object(key policy.TargetKey) (*topology.Object, bool) {
	if key.Object() == w.key {
		return nil, false
	}
	return w.Snapshot.Object(key)
}

func (w *withoutObject) PoliciesAt(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy {
	if key.Object() == w.key {
		return nil
	}
	return w.Snapshot.PoliciesAt(kind, key)
}

func (w *withoutObject) ObjectsLabelled(gk schema.GroupKind, key, value string) iter.Seq[*topology.Object] {
	return w.skip(w.Snapshot.ObjectsLabelled(gk, key, value))
}

func (w *withoutObject) ObjectsOfKind(gk schema.GroupKind) iter.Seq[*topology.Object] {
	return w.skip(w.Snapshot.ObjectsOfKind(gk))
}

func (w *withoutObject) RoutesByParent(parent policy.TargetKey) iter.Seq[*topology.Object] {
	return w.skip(w.Snapshot.RoutesByParent(parent))
}

func (w *withoutObject) RoutesByBackend(backend policy.TargetKey) iter.Seq[*topology.Object] {
	return w.skip(w.Snapshot.RoutesByBackend(backend))
}

func (w *withoutObject) GatewaysByClass(class string) []*topology.Object {
	return w.drop(w.Snapshot.GatewaysByClass(class))
}

func (w *withoutObject) GatewaysInNamespace(namespace string) []*topology.Object {
	return w.drop(w.Snapshot.GatewaysInNamespace(namespace))
}

func (w *withoutObject) ListenerSetsByGateway(gateway policy.TargetKey) []*topology.Object {
	return w.drop(w.Snapshot.ListenerSetsByGateway(gateway))
}

func (w *withoutObject) skip(all iter.Seq[*topology.Object]) iter.Seq[*topology.Object] {
	return func(yield func(*topology.Object) bool) {
		for o := range all {
			if o.Key() != w.key && !yield(o) {
				return
			}
		}
	}
}

func (w *withoutObject) drop(all []*topology.Object) []*topology.Object {
	i := slices.IndexFunc(all, func(o *topology.Object) bool { return o.Key() == w.key })
	if i < 0 {
		return all
	}
	return slices.Delete(slices.Clone(all), i, i+1)
}

// MaxNamedPolicies bounds the policies one sentence of a target deletion names; the rest
// are counted.
const MaxNamedPolicies = 10

// maxChangedGroups bounds the groups of changed paths a deletion's answer describes.
const maxChangedGroups = 3

// Warnings are the warnings of a deletion admitted with its findings, worded for someone
// deleting in the target's namespace: one per finding, each opening with
// WarningDeleteImpact. None when the deletion changes nothing.
func (d TargetDeletion) Warnings(msgs *validation.Messages) []string {
	clauses := d.clauses(msgs)
	if len(clauses) == 0 {
		return nil
	}
	out := make([]string, len(clauses))
	for i, c := range clauses {
		out[i] = fmt.Sprintf("%s: deleting %s %s", WarningDeleteImpact, d.Target.Shown(), c)
	}
	return out
}

// ReasonTargetInUse opens the refusal of a target deletion.
const ReasonTargetInUse = "TargetInUse"

// Refusal is the message of a deletion the Deny mode refuses: what it would do, and how to
// proceed, worded as Warnings are.
func (d TargetDeletion) Refusal(msgs *validation.Messages) string {
	return fmt.Sprintf("%s: deleting %s is refused (targetDeletions mode Deny in namespace %q): it %s; "+
		"retarget or delete those policies first, or ask your platform team to lift the mode",
		ReasonTargetInUse, d.Target.Shown(), policy.Echo(d.Target.Namespace), strings.Join(d.clauses(msgs), "; it "))
}

// clauses describe each finding after "deleting <target>" (or "it").
func (d TargetDeletion) clauses(msgs *validation.Messages) []string {
	var out []string
	viewer := d.Target.Namespace
	if len(d.Stranded) > 0 {
		out = append(out, fmt.Sprintf("leaves %s without a target, so %s nowhere: %s",
			countPolicies(len(d.Stranded)), plural(len(d.Stranded), "it applies", "they apply"), namePolicies(d.Stranded, msgs, viewer)))
	}
	if len(d.Unreached) > 0 {
		out = append(out, fmt.Sprintf("leaves %s whose targets then attach to no Gateway, so %s nowhere: %s",
			countPolicies(len(d.Unreached)), plural(len(d.Unreached), "it applies", "they apply"), namePolicies(d.Unreached, msgs, viewer)))
	}
	for i, c := range d.Changed {
		if i == maxChangedGroups {
			rest := 0
			for _, more := range d.Changed[i:] {
				rest += more.Paths
			}
			out = append(out, fmt.Sprintf("changes the effective policy on %d more %s to it as well", rest, pathNoun(nil, rest)))
			break
		}
		instead := "nothing of the kind applies there"
		if len(c.Instead) > 0 {
			instead = "what applies instead: " + c.describeInstead(msgs, viewer)
		}
		lost := "no policy"
		if len(c.Lost) > 0 {
			lost = namePolicies(c.Lost, msgs, viewer)
		}
		out = append(out, fmt.Sprintf("changes the effective %s on %d %s to it: %s no longer %s there; %s",
			c.Row.Kind, c.Paths, pathNoun(c.Row, c.Paths), lost, plural(len(c.Lost), "applies", "apply"), instead))
	}
	return out
}

// describeInstead lists the effective settings after the deletion: each with its value and
// the policy that sets it, where the requester may read that policy; otherwise only counted
// per policy ("2 settings from a ColorPolicy in namespace "infra""), since even a setting's
// path (a named rule, a list item's key) is that policy's content.
func (c ChangedPaths) describeInstead(msgs *validation.Messages, viewer string) string {
	var parts []string
	hidden := map[string]int{} // description -> index in parts
	counts := map[string]int{}
	shown, more := 0, 0
	for _, s := range c.Instead {
		p := c.sources[s.Source]
		if p != nil && !msgs.Reveals(p.Namespace, viewer) {
			who := msgs.Name(p.Row.Kind, p.Namespace, p.Name, viewer)
			counts[who]++
			if _, ok := hidden[who]; !ok {
				hidden[who] = len(parts)
				parts = append(parts, "")
			}
			parts[hidden[who]] = fmt.Sprintf("%d %s from %s", counts[who], plural(counts[who], "setting", "settings"), who)
			continue
		}
		if shown == MaxNamedPolicies {
			more++
			continue
		}
		shown++
		value, err := json.Marshal(s.Value)
		if err != nil {
			value = []byte(fmt.Sprint(s.Value))
		}
		who := "a policy"
		if p != nil {
			who = msgs.Name(p.Row.Kind, p.Namespace, p.Name, viewer)
		}
		parts = append(parts, fmt.Sprintf("%s: %s from %s", s.Name, value, who))
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more %s", more, plural(more, "setting", "settings")))
	}
	return strings.Join(parts, ", ")
}

func countPolicies(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "policy", "policies"))
}

// namePolicies names policies as msgs allows someone in viewer's namespace to see them: those
// of other namespaces by kind and namespace, once per kind and namespace with a count; at
// most MaxNamedPolicies names, the rest counted.
func namePolicies(ps []*policy.Policy, msgs *validation.Messages, viewer string) string {
	var names []string
	counts := map[string]int{}
	for _, p := range ps {
		name := msgs.Name(p.Row.Kind, p.Namespace, p.Name, viewer)
		if counts[name] == 0 {
			names = append(names, name)
		}
		counts[name]++
	}
	out := make([]string, 0, min(len(names), MaxNamedPolicies)+1)
	for i, name := range names {
		if i == MaxNamedPolicies {
			rest := 0
			for _, more := range names[i:] {
				rest += counts[more]
			}
			out = append(out, fmt.Sprintf("and %d more", rest))
			break
		}
		if n := counts[name]; n > 1 {
			name = fmt.Sprintf("%s (%d policies)", name, n)
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}
