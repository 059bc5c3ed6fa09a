package topology

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// A controller acts only on the Gateways of its own GatewayClasses, so a policy kind whose
// row names its implementations (kinds.KindRow.Scoped) takes effect only on the paths
// through those Gateways. A path through another class's Gateway is no path of the kind:
// the walk leaves it out, so nothing there is enforced, overridden or in conflict. A Gateway
// whose GatewayClass is not in the snapshot (yet) is judged as served.

// ClassServing is how a Gateway's GatewayClass stands with a kind's controllers.
type ClassServing int

const (
	// ClassServed: a controller of the kind serves the class, or the kind is not scoped.
	ClassServed ClassServing = iota
	// ClassMissing: the GatewayClass is not in the snapshot; judged as served.
	ClassMissing
	// ClassNotServed: the class names a controller no implementation of the kind is.
	ClassNotServed
)

// ClassOf says how a Gateway's class stands with row's controllers, and the class's
// controllerName when it is in the snapshot.
func ClassOf(snap Snapshot, row *kinds.KindRow, gw *Object) (ClassServing, string) {
	if !row.Scoped() || gw.Gateway == nil {
		return ClassServed, ""
	}
	return classServing(snap, row, gw.Gateway.ClassName)
}

// classServing is ClassOf by the class's name. A class without a controllerName (the API
// server requires one: only a manifest sketched for `check` lacks it) is taken as served.
func classServing(snap Snapshot, row *kinds.KindRow, class string) (ClassServing, string) {
	obj, ok := snap.Object(classKey(class))
	if !ok {
		return ClassMissing, ""
	}
	controller := obj.ControllerName()
	if controller == "" || row.Serves(controller) {
		return ClassServed, controller
	}
	return ClassNotServed, controller
}

func classKey(name string) policy.TargetKey {
	return policy.TargetKey{Group: kinds.GatewayGroup, Kind: "GatewayClass", Name: name}
}

// Serving is how the paths through one attachment point stand with a kind's controllers.
type Serving struct {
	// NotServed are the Gateways on the paths whose class no controller of the kind serves
	// (for a GatewayClass target, none: Class says it), and Missing those whose class is
	// not in the snapshot, each at most MaxServingGateways.
	NotServed, Missing []ServingGateway
	// Class is a GatewayClass target's own standing.
	Class *ServingGateway
	// served: some path runs through a served Gateway (or one whose class is missing), or
	// the point has no path at all (judged as today: it may get one).
	served bool
}

// ServingGateway is a Gateway (nil for a GatewayClass target), its class and the class's
// controllerName ("" when the class is missing).
type ServingGateway struct {
	Gateway    *Object
	Class      string
	Controller string
}

// MaxServingGateways bounds the Gateways a Serving names of each standing: a selector
// policy's backend can sit under hundreds, and one is enough to say why.
const MaxServingGateways = 5

// Served reports whether a controller of the kind acts somewhere through the point, or the
// point has no path yet.
func (s Serving) Served() bool { return s.served }

// ServingAt says how the paths through an attachment point stand with row's controllers:
// the Gateways they run through, by their classes. An unscoped row is served everywhere.
func ServingAt(snap Snapshot, row *kinds.KindRow, key policy.TargetKey) Serving {
	if !row.Scoped() {
		return Serving{served: true}
	}
	info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	if info.Role == kinds.RoleGatewayClass {
		standing, controller := classServing(snap, row, key.Name)
		s := Serving{served: standing != ClassNotServed}
		if standing != ClassServed {
			s.Class = &ServingGateway{Class: key.Name, Controller: controller}
		}
		return s
	}
	var s Serving
	gateways, unknown := GatewaysNamed(snap, key)
	for _, gw := range gateways {
		standing, controller := ClassOf(snap, row, gw)
		g := ServingGateway{Gateway: gw, Class: gw.Gateway.ClassName, Controller: controller}
		switch standing {
		case ClassServed:
			s.served = true
		case ClassMissing:
			s.served = true
			if len(s.Missing) < MaxServingGateways {
				s.Missing = append(s.Missing, g)
			}
		case ClassNotServed:
			if len(s.NotServed) < MaxServingGateways {
				s.NotServed = append(s.NotServed, g)
			}
		}
	}
	if len(gateways) == 0 || unknown {
		s.served = true
	}
	return s
}

// GatewaysNamed returns the distinct Gateways an attachment point hangs from, as its
// objects name them, attached or not: a Gateway itself, a ListenerSet's parent, the
// Gateways a route's parentRefs name (through ListenerSets), those of the routes that name a
// backend, a namespace's. An implementation holds a route, and refuses a second policy on
// it, when one of its own Gateways is among the route's parents, whether or not the route
// attaches there (Envoy Gateway: a route whose hostnames match none of its listeners); it
// holds none whose parents are all another class's, even where the route attaches to none.
// unknown says a parent named is not in the snapshot (yet): it may be any class's.
func GatewaysNamed(snap Snapshot, key policy.TargetKey) (gateways []*Object, unknown bool) {
	add := func(parent policy.TargetKey) {
		obj, ok := snap.Object(parent.Object())
		if !ok {
			if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: parent.Group, Kind: parent.Kind}); info.Watched {
				unknown = true
			}
			return
		}
		if obj.Gateway == nil {
			return // a Service parent (GAMMA): no Gateway's class decides
		}
		if obj.Gateway.Parent != nil {
			if obj, ok = snap.Object(*obj.Gateway.Parent); !ok || obj.Gateway == nil {
				unknown = unknown || !ok
				return
			}
		}
		if !containsObject(gateways, obj) {
			gateways = append(gateways, obj)
		}
	}
	parentsOf := func(route *Object) {
		if route.Route == nil {
			return
		}
		for p := range route.Route.ParentRefs() {
			add(p.Key())
		}
	}
	info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	switch info.Role {
	case kinds.RoleNamespace:
		gateways = append(gateways, snap.GatewaysInNamespace(key.Name)...)
	case kinds.RoleGateway, kinds.RoleListenerSet:
		add(key)
	case kinds.RoleRoute:
		if route, ok := snap.Object(key.Object()); ok {
			parentsOf(route)
		}
	case kinds.RoleBackend, "":
		for route := range snap.RoutesByBackend(key.Object()) {
			parentsOf(route)
		}
	}
	return gateways, unknown
}

func containsObject(list []*Object, o *Object) bool {
	for _, x := range list {
		if x == o {
			return true
		}
	}
	return false
}

// servingFilter keeps, for a scoped row, the paths a controller of the kind serves, and
// counts those it drops.
type servingFilter struct {
	snap Snapshot
	row  *kinds.KindRow
	// last memoizes the last Gateway judged: a walk emits a Gateway's paths together.
	last     *Object
	lastKeep bool
	dropped  int
}

// keepGateway reports whether paths through gw are the kind's.
func (f *servingFilter) keepGateway(gw *Object) bool {
	if gw != f.last {
		standing, _ := ClassOf(f.snap, f.row, gw)
		f.last, f.lastKeep = gw, standing != ClassNotServed
	}
	return f.lastKeep
}
