package topology

import (
	"iter"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/internal/intern"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// The topology fields of target objects, parsed once when an object enters a snapshot so
// that walking the hierarchy never re-reads generic JSON. All xRoutes share one shape.

// GatewayInfo is what the hierarchy needs of a Gateway or a ListenerSet.
type GatewayInfo struct {
	ClassName string
	Listeners []ListenerInfo
	// Parent is a ListenerSet's parent Gateway (nil for a Gateway).
	Parent *policy.TargetKey
	// ListenersFrom is a Gateway's allowedListeners.namespaces.from: None (the default, also
	// when unset), Same, All or Selector (with ListenersSelector): which ListenerSets it
	// accepts.
	ListenersFrom     string
	ListenersSelector map[string]any
	// Created is metadata.creationTimestamp in Unix seconds (the API server writes it to the
	// second; 0 when absent): ListenerSets' listeners take precedence oldest first
	// (listener_conflicts.go). An int64 holds no pointer for the collector to scan, where a
	// time.Time holds one.
	Created int64
}

// ListenerInfo is one listener.
type ListenerInfo struct {
	Name     string
	Port     int64
	Protocol string
	Hostname string
	// From is allowedRoutes.namespaces.from: Same (default), All or Selector.
	From     string
	Selector map[string]any
	// Kinds is allowedRoutes.kinds as group/kind; empty means the protocol's defaults.
	Kinds []RouteKind
}

// RouteKind is a group and kind a listener admits.
type RouteKind struct{ Group, Kind string }

// RouteInfo is what the hierarchy needs of any xRoute.
//
// A snapshot holds tens of thousands of routes, and the collector's work on every cycle
// grows with their pointer words, even those pointing at strings it has already marked
// (about 6 ns each here, against 11 ns per object it marks without scanning). So a route
// keeps its texts in one string, text: its own name (Object.Name is its first bytes), its
// rules' names, and the keys of its parents and of its distinct backends, packed
// (packed_keys.go). Everything else but Hostnames is pointer-free offsets into it: a route
// with one parent and one backend is 15 pointer words, where TargetKeys made it 26.
type RouteInfo struct {
	Hostnames []string
	Rules     []RuleInfo
	parents   []parentRef
	// backendKeys are the distinct backends the rules name, and backends every rule's
	// backendRefs, rule after rule, as an index into them and a port. The rules of a route
	// mostly send to the same few Services, and a snapshot holds every backendRef of every
	// route (100,000 in the synthetic cluster).
	backendKeys []span
	backends    []backendIndex
	text        string
}

// span is a piece of RouteInfo.text.
type span struct{ from, to int32 }

func (r *RouteInfo) in(s span) string { return r.text[s.from:s.to] }

// parentRef is a stored parentRef: its key (sectionName as Section) and its port.
type parentRef struct {
	key  span
	port int64
}

// RuleName returns the name of rule i ("" for an unnamed rule).
func (r *RouteInfo) RuleName(i int) string { return r.in(r.Rules[i].name) }

// ParentRefs returns the route's parentRefs, in order, with defaults applied.
func (r *RouteInfo) ParentRefs() iter.Seq[ParentRef] {
	return func(yield func(ParentRef) bool) {
		for _, p := range r.parents {
			k := unpackKey(r.in(p.key))
			section := k.Section
			k.Section = ""
			if !yield(ParentRef{key: k, SectionName: section, Port: p.port}) {
				return
			}
		}
	}
}

// backendIndex is one backendRef: its key in RouteInfo.backendKeys, and its port exactly as
// written (0 when absent), so that a port the Service does not have reaches none of its ports.
type backendIndex struct {
	key  int32
	port int64
}

// Backends returns the backendRefs of rule i.
func (r *RouteInfo) Backends(i int) iter.Seq[BackendRef] {
	return r.backendsIn(r.backends[r.Rules[i].from:r.Rules[i].to])
}

// AllBackends returns the backendRefs of every rule, in rule order.
func (r *RouteInfo) AllBackends() iter.Seq[BackendRef] { return r.backendsIn(r.backends) }

func (r *RouteInfo) backendsIn(refs []backendIndex) iter.Seq[BackendRef] {
	return func(yield func(BackendRef) bool) {
		for _, b := range refs {
			if !yield(BackendRef{key: unpackKey(r.in(r.backendKeys[b.key])), Port: b.port}) {
				return
			}
		}
	}
}

// ParentRef is one spec.parentRefs entry with defaults applied.
type ParentRef struct {
	key         policy.TargetKey // Group, Kind, Namespace, Name of the parent
	SectionName string
	Port        int64
}

// Key returns the parent's key.
func (p ParentRef) Key() policy.TargetKey { return p.key }

// RuleInfo is one route rule. It holds no pointer (its name is a span of RouteInfo.text):
// a snapshot holds every rule of every route, 100,000 in the synthetic cluster, and the
// collector scans none of them.
type RuleInfo struct {
	from, to int32 // its backendRefs in RouteInfo.backends
	name     span
}

// BackendRef is one backendRef with defaults applied, as the hierarchy reads it.
type BackendRef struct {
	key  policy.TargetKey
	Port int64
}

// Key returns the backend's key.
func (b BackendRef) Key() policy.TargetKey { return b.key }

// ServiceInfo holds a Service's named ports.
type ServiceInfo struct {
	Ports []PortInfo
}

// PortInfo is one Service port.
type PortInfo struct {
	Name string
	Port int64
}

// allocObject allocates an object of kind gk together with the topology its kind has, in one
// allocation: the snapshot keeps tens of thousands of routes and Services, and each
// allocation is one more object the garbage collector visits on every cycle.
func allocObject(gk schema.GroupKind) *Object {
	info, _ := kinds.TargetInfoFor(gk)
	switch info.Role {
	case kinds.RoleGateway, kinds.RoleListenerSet:
		return &Object{}
	case kinds.RoleRoute:
		return allocWith(func(o *Object, t *routeTopology) {
			t.parents, t.backendKeys = t.firstParent[:0], t.firstBackend[:0]
			o.Route = &t.RouteInfo
		})
	case kinds.RoleBackend, "":
		return allocWith(func(o *Object, t *serviceTopology) {
			t.Ports = t.firstPorts[:0]
			o.Service = &t.ServiceInfo
		})
	}
	return &Object{}
}

// routeTopology is a route's topology with room for its first parentRef and its first
// distinct backend, and serviceTopology a Service's with room for two ports: most routes
// have one of each, most Services one or two ports, and their own small arrays were two
// more objects per route and one per Service for the collector to visit on every cycle.
// The slices start in that room; a longer list moves out of it as append does. parseTopology
// clips each list to its length, so nothing appended later can write into the room.
type routeTopology struct {
	RouteInfo
	firstParent  [1]parentRef
	firstBackend [1]span
}

type serviceTopology struct {
	ServiceInfo
	firstPorts [2]PortInfo
}

// allocWith allocates an object and its topology T together; attach points the object at it.
func allocWith[T any](attach func(*Object, *T)) *Object {
	both := &struct {
		Object
		topology T
	}{}
	attach(&both.Object, &both.topology)
	return &both.Object
}

// parseTopology fills the object's topology fields from its generic JSON, into the topology
// allocObject gave it.
func (o *Object) parseTopology(raw map[string]any) {
	spec, _ := raw["spec"].(map[string]any)
	info, _ := kinds.TargetInfoFor(o.GroupKind())
	switch info.Role {
	case kinds.RoleGatewayClass:
		o.sections = intern.String(str(spec["controllerName"])) // see Object.sections
	case kinds.RoleGateway, kinds.RoleListenerSet:
		g := &GatewayInfo{ClassName: intern.String(str(spec["gatewayClassName"])), Created: created(raw)}
		for _, l := range list(spec["listeners"]) {
			g.Listeners = append(g.Listeners, parseListener(l))
		}
		if allowed, ok := spec["allowedListeners"].(map[string]any); ok {
			ns, _ := allowed["namespaces"].(map[string]any)
			g.ListenersFrom = intern.String(str(ns["from"]))
			g.ListenersSelector, _ = ns["selector"].(map[string]any)
		}
		if parent, ok := spec["parentRef"].(map[string]any); ok {
			k := policy.TargetKey{Group: orDefault(parent, "group", kinds.GatewayGroup), Kind: orDefault(parent, "kind", "Gateway"),
				Namespace: orDefault(parent, "namespace", o.Namespace), Name: str(parent["name"])}
			g.Parent = &k
		}
		o.Gateway = g
	case kinds.RoleRoute:
		o.Route.parse(o, spec)
	case kinds.RoleBackend, "":
		for _, p := range list(spec["ports"]) {
			o.Service.Ports = append(o.Service.Ports, PortInfo{Name: intern.String(str(p["name"])), Port: num(p["port"])})
		}
		o.Service.Ports = slices.Clip(o.Service.Ports) // see serviceTopology
	}
}

// parse fills a route's topology from its spec, and points o.Name into the route's text.
func (r *RouteInfo) parse(o *Object, spec map[string]any) {
	var text []byte
	mark := func(s string) span {
		from := len(text)
		text = append(text, s...)
		return span{int32(from), int32(len(text))}
	}
	name := mark(o.Name)
	for _, p := range list(spec["parentRefs"]) {
		from := len(text)
		text = appendKey(text, policy.TargetKey{Group: orDefault(p, "group", kinds.GatewayGroup), Kind: orDefault(p, "kind", "Gateway"),
			Namespace: orDefault(p, "namespace", o.Namespace), Name: str(p["name"]), Section: str(p["sectionName"])})
		r.parents = append(r.parents, parentRef{key: span{int32(from), int32(len(text))}, port: num(p["port"])})
	}
	for _, h := range listAny(spec["hostnames"]) {
		r.Hostnames = append(r.Hostnames, str(h))
	}
	// Sized exactly: the snapshot keeps these for the life of the process.
	rules := list(spec["rules"])
	if _, set := spec["rules"]; !set && o.Group == kinds.GatewayGroup && o.Kind == "HTTPRoute" {
		// The API server stores an HTTPRoute written without rules with one defaulted rule
		// (path prefix "/": apis/v1/httproute_types.go Rules' default), so a manifest judged
		// offline has it too (issue 29).
		rules = []map[string]any{{}}
	}
	r.Rules = make([]RuleInfo, 0, len(rules))
	n := 0
	for _, rule := range rules {
		n += len(list(rule["backendRefs"]))
	}
	r.backends = make([]backendIndex, 0, n)
	var keys []policy.TargetKey // the distinct backends, in order of first mention
	for _, rule := range rules {
		ri := RuleInfo{from: int32(len(r.backends)), name: mark(str(rule["name"]))}
		for _, b := range list(rule["backendRefs"]) {
			key := policy.TargetKey{Group: orDefault(b, "group", kinds.CoreGroup), Kind: orDefault(b, "kind", "Service"),
				Namespace: orDefault(b, "namespace", o.Namespace), Name: str(b["name"])}
			i := slices.Index(keys, key)
			if i < 0 {
				i, keys = len(keys), append(keys, key)
			}
			r.backends = append(r.backends, backendIndex{key: int32(i), port: num(b["port"])})
		}
		ri.to = int32(len(r.backends))
		r.Rules = append(r.Rules, ri)
	}
	for _, key := range keys {
		from := len(text)
		text = appendKey(text, key)
		r.backendKeys = append(r.backendKeys, span{int32(from), int32(len(text))})
	}
	r.text = string(text)
	o.Name = r.in(name)
	// Kept for the life of the process, and clipped (see routeTopology).
	r.parents, r.backendKeys = slices.Clip(r.parents), slices.Clip(r.backendKeys)
}

// created reads metadata.creationTimestamp (RFC 3339) in Unix seconds; 0 when absent or
// malformed.
func created(raw map[string]any) int64 {
	meta, _ := raw["metadata"].(map[string]any)
	s := str(meta["creationTimestamp"])
	if s == "" {
		return 0 // without the error time.Parse would allocate
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return t.Unix()
}

func parseListener(l map[string]any) ListenerInfo {
	li := ListenerInfo{Name: intern.String(str(l["name"])), Port: num(l["port"]), Protocol: intern.String(str(l["protocol"])), Hostname: str(l["hostname"]), From: "Same"}
	allowed, _ := l["allowedRoutes"].(map[string]any)
	if ns, ok := allowed["namespaces"].(map[string]any); ok {
		if from := intern.String(str(ns["from"])); from != "" {
			li.From = from
		}
		li.Selector, _ = ns["selector"].(map[string]any)
	}
	for _, k := range list(allowed["kinds"]) {
		li.Kinds = append(li.Kinds, RouteKind{Group: orDefault(k, "group", kinds.GatewayGroup), Kind: str(k["kind"])})
	}
	return li
}
