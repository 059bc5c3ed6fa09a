package topology

import (
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// PathsThrough returns the context paths of a row's kind that pass through an attachment
// point. The work grows with the paths found, never with the cluster: every step is an
// index lookup (routes by parent or backend, gateways by class or namespace). A scoped row's
// paths through Gateways no controller of its kind serves are left out (serving.go).
func PathsThrough(snap Snapshot, row *kinds.KindRow, key policy.TargetKey) []ContextPath {
	out, _ := pathsThrough(snap, row, key, nil)
	return out
}

// pathsThrough is PathsThrough appending to into; it also returns how many paths it left
// out as not served.
func pathsThrough(snap Snapshot, row *kinds.KindRow, key policy.TargetKey, into []ContextPath) ([]ContextPath, int) {
	w := newWalker(snap, row, into)
	if row.Class == kinds.Direct {
		w.direct(key)
	} else {
		w.through(key)
	}
	return w.out, w.dropped()
}

func newWalker(snap Snapshot, row *kinds.KindRow, into []ContextPath) *walker {
	w := &walker{snap: snap, end: row.PathDepth(), out: into}
	if row.Scoped() {
		w.serving = &servingFilter{snap: snap, row: row}
	}
	return w
}

// through walks the paths of an Inherited kind through an attachment point.
func (w *walker) through(key policy.TargetKey) {
	start := len(w.out)
	info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	switch info.Role {
	case kinds.RoleGatewayClass:
		for _, gw := range w.snap.GatewaysByClass(key.Name) {
			w.fromGateway(gw, "", nil)
		}
	case kinds.RoleNamespace:
		for _, gw := range w.snap.GatewaysInNamespace(key.Name) {
			w.fromGateway(gw, "", nil)
		}
	case kinds.RoleGateway:
		if gw, ok := w.snap.Object(key); ok && gw.Gateway != nil {
			w.fromGateway(gw, key.Section, nil)
		}
	case kinds.RoleListenerSet:
		if set, ok := w.snap.Object(key); ok && set.Gateway != nil && set.Gateway.Parent != nil {
			if gw, ok := w.snap.Object(*set.Gateway.Parent); ok {
				w.fromListeners(gw, set, key.Section, nil)
			}
		}
	case kinds.RoleRoute:
		if route, ok := w.snap.Object(key.Object()); ok && route.Route != nil {
			w.viaParents(route, key.Section, nil)
		}
	case kinds.RoleBackend, "":
		backend := key.Object()
		for route := range w.snap.RoutesByBackend(backend) {
			w.viaParents(route, "", &backend)
		}
		if key.Section != "" {
			w.out = w.out[:start+len(keepPort(w.out[start:], key.Section))]
		}
	}
}

// AllPaths returns every context path of a row's kind in the state, for whole-state views.
func AllPaths(snap State, row *kinds.KindRow) []ContextPath {
	w := newWalker(snap, row, nil)
	for _, gw := range snap.Gateways() {
		w.fromGateway(gw, "", nil)
	}
	return w.out
}

type walker struct {
	snap Snapshot
	end  kinds.Depth
	out  []ContextPath
	// serving, for a scoped row, leaves out the paths through Gateways no controller of the
	// kind serves; notServed drops every path (a Direct target reached through none).
	serving   *servingFilter
	notServed bool
	// conflicts are the losing listeners of each Gateway whose listeners the walk visits
	// all of (judgeAll, listener_conflicts.go); others are judged one by one (lostOne).
	conflicts map[*Object]map[ListenerRef]ListenerConflict
}

func (w *walker) emit(c ContextPath) {
	if w.serving != nil && (w.notServed || (c.Gateway != nil && !w.serving.keepGateway(c.Gateway))) {
		w.serving.dropped++
		return
	}
	c.end = w.end
	w.out = append(w.out, c)
}

// dropped is how many paths the walk left out as not served.
func (w *walker) dropped() int {
	if w.serving == nil {
		return 0
	}
	return w.serving.dropped
}

// fromGateway walks a Gateway's own listeners and those of its ListenerSets. A listener
// named on the Gateway is one of its own: a ListenerSet's listener of the same name is
// another section (Gateway API ListenerSet; issue 29).
func (w *walker) fromGateway(gw *Object, listener string, route *Object) {
	if w.end >= kinds.DepthListener && listener == "" {
		w.judgeAll(gw) // every listener is asked about
	}
	w.fromListeners(gw, nil, listener, route)
	if w.end >= kinds.DepthListener && listener == "" {
		for _, set := range w.snap.ListenerSetsByGateway(gw.Key()) {
			w.fromListeners(gw, set, listener, route)
		}
	}
}

// fromListeners walks the listeners of gw (or of a ListenerSet of gw), optionally only one
// listener, and optionally only one route. A listener that loses a listener conflict is on
// no path (listener_conflicts.go).
func (w *walker) fromListeners(gw, set *Object, listener string, only *Object) {
	if w.end == kinds.DepthGateway {
		if set == nil {
			w.emit(ContextPath{Gateway: gw})
		}
		return
	}
	owner := gw
	if set != nil {
		if !w.setAccepted(gw, set) {
			return
		}
		owner = set
	}
	for _, l := range owner.Gateway.Listeners {
		if (listener != "" && l.Name != listener) || w.lost(gw, owner, &l) {
			continue
		}
		base := ContextPath{Gateway: gw, Set: set, Listener: l.Name}
		if w.end == kinds.DepthListener {
			w.emit(base)
			continue
		}
		routes := w.snap.RoutesByParent(owner.Key())
		if only != nil {
			routes = slices.Values([]*Object{only})
		}
		for route := range routes {
			if w.attaches(route, owner, l) {
				w.fromRoute(base, route, "", nil)
			}
		}
	}
}

// viaParents walks up from a route to every listener it attaches to, then down its rules.
func (w *walker) viaParents(route *Object, rule string, backend *policy.TargetKey) {
	seen := map[policy.TargetKey]bool{}
	for p := range route.Route.ParentRefs() {
		key := p.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		owner, gw, ok := w.acceptedParent(key)
		if !ok {
			continue
		}
		var set *Object
		if owner != gw {
			set = owner
		}
		for _, l := range owner.Gateway.Listeners {
			if w.attaches(route, owner, l) && !w.lost(gw, owner, &l) {
				w.fromRoute(ContextPath{Gateway: gw, Set: set, Listener: l.Name}, route, rule, backend)
			}
		}
	}
}

// fromRoute walks a route's rules, backends and ports below a listener.
func (w *walker) fromRoute(base ContextPath, route *Object, rule string, backend *policy.TargetKey) {
	base.Route = route
	if w.end == kinds.DepthRoute {
		w.emit(base)
		return
	}
	for i := range route.Route.Rules {
		if rule != "" && route.Route.RuleName(i) != rule {
			continue
		}
		c := base
		c.Rule = i
		if w.end == kinds.DepthRule {
			w.emit(c)
			continue
		}
		seen := map[policy.TargetKey]bool{}
		for b := range route.Route.Backends(i) {
			key := b.Key()
			if (backend != nil && key != *backend) || seen[key] || !w.backendPermitted(route, key) {
				continue
			}
			seen[key] = true
			c.Backend = key
			w.fromBackend(c, b)
		}
	}
}

// fromBackend ends a path at the backend, or at the Service port a backendRef selects.
func (w *walker) fromBackend(c ContextPath, b BackendRef) {
	if w.end == kinds.DepthBackend {
		w.emit(c)
		return
	}
	c.Port = portName(w.snap, b.Key(), b.Port)
	w.emit(c)
}

// direct lists the paths of a Direct kind: its declared target, and the target's sections
// when the effective target is a section. Direct effects do not span the hierarchy.
func (w *walker) direct(key policy.TargetKey) {
	if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind}); info.Role == kinds.RoleGatewayClass {
		// A class-wide Direct policy acts on each of its Gateways (Envoy Gateway's
		// EnvoyPatchPolicy on the class of Gateways it merges).
		w.end = kinds.DepthGateway
		for _, gw := range w.snap.GatewaysByClass(key.Name) {
			w.emit(ContextPath{start: kinds.DepthGateway, Gateway: gw})
		}
		return
	}
	obj, ok := w.snap.Object(key.Object())
	if !ok {
		return
	}
	if w.serving != nil && (obj.Route != nil || obj.Service != nil) {
		// A route's or a backend's own paths name no Gateway: the controllers that serve the
		// Gateways above it decide whether any acts on it.
		w.notServed = !ServingAt(w.snap, w.serving.row, key.Object()).Served()
	}
	switch {
	case obj.Gateway != nil && obj.Gateway.Parent == nil:
		c := ContextPath{start: kinds.DepthGateway, Gateway: obj}
		if w.end < kinds.DepthListener {
			w.emit(c)
			return
		}
		w.end = kinds.DepthListener
		if key.Section == "" {
			w.judgeAll(obj) // every listener is asked about
		}
		w.directListeners(c, obj, key.Section)
		if key.Section == "" {
			// A Gateway's policy reaches the listeners its ListenerSets add, unless a
			// policy on the ListenerSet (lower on the same path) overrides it.
			for _, set := range w.snap.ListenerSetsByGateway(obj.Key()) {
				c.Set = set
				w.directListeners(c, set, "")
			}
		}
	case obj.Gateway != nil:
		// A ListenerSet's policy reaches only its own listeners.
		gw, ok := w.snap.Object(*obj.Gateway.Parent)
		if !ok || gw.Gateway == nil || w.end < kinds.DepthListener {
			return
		}
		w.end = kinds.DepthListener
		w.directListeners(ContextPath{start: kinds.DepthGateway, Gateway: gw, Set: obj}, obj, key.Section)
	case obj.Route != nil:
		c := ContextPath{start: kinds.DepthRoute, Route: obj}
		if w.end <= kinds.DepthRoute {
			w.end = kinds.DepthRoute
			w.emit(c)
			return
		}
		w.end = kinds.DepthRule
		for i := range obj.Route.Rules {
			if key.Section == "" || obj.Route.RuleName(i) == key.Section {
				c.Rule = i
				w.emit(c)
			}
		}
	case obj.Service != nil:
		c := ContextPath{start: kinds.DepthBackend, Backend: key.Object()}
		if w.end < kinds.DepthPort {
			w.end = kinds.DepthBackend
			w.emit(c)
			return
		}
		for _, p := range obj.Service.Ports {
			name := p.Name
			if name == "" {
				name = strconv.FormatInt(p.Port, 10)
			}
			if key.Section == "" || name == key.Section {
				c.Port = name
				w.emit(c)
			}
		}
	}
}

// directListeners emits c for each listener of owner (a Gateway or a ListenerSet), or only
// the one named section; not one that loses a listener conflict.
func (w *walker) directListeners(c ContextPath, owner *Object, section string) {
	for _, l := range owner.Gateway.Listeners {
		if (section == "" || l.Name == section) && !w.lost(c.Gateway, owner, &l) {
			c.Listener = l.Name
			w.emit(c)
		}
	}
}

// portName names the Service port a backendRef selects: its name, or its number when the
// port is unnamed or the Service is not in the snapshot.
func portName(snap Snapshot, backend policy.TargetKey, port int64) string {
	if svc, ok := snap.Object(backend); ok && svc.Service != nil {
		for _, p := range svc.Service.Ports {
			if p.Port == port && p.Name != "" {
				return p.Name
			}
		}
		if port == 0 && len(svc.Service.Ports) == 1 && svc.Service.Ports[0].Name != "" {
			return svc.Service.Ports[0].Name
		}
	}
	return strconv.FormatInt(port, 10)
}

func keepPort(paths []ContextPath, port string) []ContextPath {
	out := paths[:0]
	for _, c := range paths {
		if c.Port == port {
			out = append(out, c)
		}
	}
	return out
}
