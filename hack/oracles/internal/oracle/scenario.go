package oracle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"sigs.k8s.io/yaml"
)

// Object is one manifest as generic JSON.
type Object = map[string]any

// Scenario is one generated cluster: the objects every policy sees, then the policies in
// creation order (each carries its creationTimestamp; their names do not follow that
// order, so neither side can lean on name order).
type Scenario struct {
	Seed     uint64
	Index    int
	Objects  []Object
	Policies []Object
}

// Name is how reports name the scenario: its seed and index regenerate it.
func (s *Scenario) Name() string { return fmt.Sprintf("seed %d scenario %d", s.Seed, s.Index) }

// Mixed reports whether the scenario holds another implementation's GatewayClass.
func (s *Scenario) Mixed() bool {
	for _, o := range s.Objects {
		if meta, _ := o["metadata"].(Object); o["kind"] == "GatewayClass" && meta["name"] != ClassName {
			return true
		}
	}
	return false
}

// YAML renders objects then the given policies as one multi-document manifest.
func YAML(objects, policies []Object) ([]byte, error) {
	var out []byte
	for _, o := range append(append([]Object{}, objects...), policies...) {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, "---\n"...)
		out = append(out, b...)
	}
	return out, nil
}

const (
	gatewayGroup = "gateway.networking.k8s.io"
	egGroup      = "gateway.envoyproxy.io"
	egVersion    = egGroup + "/v1alpha1"
	// ControllerName is Envoy Gateway's controller name.
	ControllerName = "gateway.envoyproxy.io/gatewayclass-controller"
	// ClassName is Envoy Gateway's GatewayClass in every scenario.
	ClassName = "eg"
)

// otherClasses are the GatewayClasses of other implementations a mixed scenario may hold
// beside Envoy Gateway's, by name, with their controllers' default names. Envoy Gateway
// loads only its own classes' Gateways, so its policies take no effect through theirs.
var otherClasses = []struct{ name, controller string }{
	{"istio", "istio.io/gateway-controller"},
	{"nginx", "gateway.nginx.org/nginx-gateway-controller"},
}

// epoch is the first creationTimestamp; objects are a second apart in creation order.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// gen draws one scenario. Every choice comes from r, so a seed and an index regenerate it.
type gen struct {
	r        *rand.Rand
	gateways []gatewayShape
	sets     []listenerSetShape
	routes   []routeShape
}

type gatewayShape struct {
	name, class string
	listeners   []string
}

type listenerSetShape struct {
	namespace, name string
	listeners       []string
}

type routeShape struct {
	namespace, name string
	rules           []string // rule names; "" for an unnamed rule
	labels          map[string]any
}

// Generate draws scenario index of seed.
func Generate(seed uint64, index int) *Scenario {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
	s := &Scenario{Seed: seed, Index: index}
	s.Objects = g.objects()
	s.Policies = g.policies()
	return s
}

func (g *gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }
func (g *gen) chance(p float64) bool         { return g.r.Float64() < p }

func (g *gen) meta(namespace, name string, labels map[string]any) Object {
	m := Object{"name": name}
	if namespace != "" {
		m["namespace"] = namespace
	}
	if len(labels) > 0 {
		m["labels"] = labels
	}
	return m
}

func (g *gen) objects() []Object {
	objs := []Object{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": g.meta("", "a", map[string]any{"team": "a"})},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": g.meta("", "b", map[string]any{"team": "b"})},
	}
	// A mixed cluster, more often than not: another implementation's GatewayClass and one
	// Gateway of it, which routes and policies name as they name Envoy Gateway's. Envoy
	// Gateway's class comes last: egctl translates the Gateways of the last GatewayClass in
	// its input, whatever its controllerName, as a running Envoy Gateway translates those
	// of its own classes.
	other := ""
	if g.chance(0.6) {
		oc := otherClasses[g.r.IntN(len(otherClasses))]
		other = oc.name
		objs = append(objs, Object{"apiVersion": gatewayGroup + "/v1", "kind": "GatewayClass", "metadata": g.meta("", oc.name, nil),
			"spec": Object{"controllerName": oc.controller}})
	}
	objs = append(objs, Object{"apiVersion": gatewayGroup + "/v1", "kind": "GatewayClass", "metadata": g.meta("", ClassName, nil),
		"spec": Object{"controllerName": ControllerName}})
	// A cluster IP each: Envoy Gateway resolves a Service backend to it.
	for i, ns := range []string{"a", "b"} {
		objs = append(objs, Object{"apiVersion": "v1", "kind": "Service", "metadata": g.meta(ns, "svc", nil),
			"spec": Object{"clusterIP": fmt.Sprintf("10.96.0.%d", 10+i), "ports": []any{Object{"name": "http", "port": 80}, Object{"name": "metrics", "port": 9000}}}})
	}
	for i := range 1 + g.r.IntN(2) {
		objs = append(objs, g.gateway(fmt.Sprintf("gw%d", i), ClassName))
	}
	if other != "" {
		objs = append(objs, g.gateway(other+"0", other))
	}
	if g.chance(0.4) {
		objs = append(objs, g.listenerSet())
	}
	for i := range 1 + g.r.IntN(3) {
		objs = append(objs, g.route(fmt.Sprintf("r%d", i)))
	}
	// Half the time, namespace b lets SecurityPolicies of a name its Services (ext auth
	// backends across namespaces need it).
	if g.chance(0.5) {
		objs = append(objs, Object{"apiVersion": gatewayGroup + "/v1beta1", "kind": "ReferenceGrant", "metadata": g.meta("b", "from-a", nil),
			"spec": Object{
				"from": []any{Object{"group": egGroup, "kind": "SecurityPolicy", "namespace": "a"}},
				"to":   []any{Object{"group": "", "kind": "Service"}},
			}})
	}
	return objs
}

var listenerNames = []string{"http", "web", "api"}

var listenerHostnames = []string{"", "", "*.example.com", "foo.example.com", "*.foo.example.com"}

// listener draws a listener whose port and hostname no earlier one of used has (the CRD
// refuses two listeners of one Gateway alike in port, protocol and hostname).
func (g *gen) listener(name string, used map[string]bool, ports ...int) Object {
	port := ports[g.r.IntN(len(ports))]
	h := g.pick(listenerHostnames...)
	for i := 0; used[fmt.Sprint(port, h)]; i++ {
		h = listenerHostnames[i%len(listenerHostnames)]
		if i >= len(listenerHostnames) {
			port++
		}
	}
	used[fmt.Sprint(port, h)] = true
	l := Object{"name": name, "protocol": "HTTP", "port": port}
	if h != "" {
		l["hostname"] = h
	}
	switch g.pick("Same", "Same", "All", "Selector") {
	case "All":
		l["allowedRoutes"] = Object{"namespaces": Object{"from": "All"}}
	case "Selector":
		l["allowedRoutes"] = Object{"namespaces": Object{"from": "Selector",
			"selector": Object{"matchLabels": Object{"team": g.pick("a", "b")}}}}
	}
	return l
}

func (g *gen) gateway(name, class string) Object {
	shape := gatewayShape{name: name, class: class}
	var listeners []any
	used := map[string]bool{}
	for _, ln := range listenerNames[:1+g.r.IntN(len(listenerNames))] {
		listeners = append(listeners, g.listener(ln, used, 80, 8080))
		shape.listeners = append(shape.listeners, ln)
	}
	spec := Object{"gatewayClassName": class, "listeners": listeners}
	if from := g.pick("", "Same", "All"); from != "" {
		spec["allowedListeners"] = Object{"namespaces": Object{"from": from}}
	}
	g.gateways = append(g.gateways, shape)
	return Object{"apiVersion": gatewayGroup + "/v1", "kind": "Gateway",
		"metadata": g.meta("a", name, map[string]any{"tier": g.pick("edge", "internal")}), "spec": spec}
}

func (g *gen) listenerSet() Object {
	shape := listenerSetShape{namespace: g.pick("a", "b"), name: "ls"}
	var listeners []any
	used := map[string]bool{}
	for _, ln := range []string{g.pick(listenerNames...), "extra"}[:1+g.r.IntN(2)] {
		listeners = append(listeners, g.listener(ln, used, 80, 8080, 9090))
		shape.listeners = append(shape.listeners, ln)
	}
	g.sets = append(g.sets, shape)
	// Now and then the ListenerSet joins the other class's Gateway (the last one drawn).
	parent := g.gateways[0]
	if last := g.gateways[len(g.gateways)-1]; last.class != ClassName && g.chance(0.3) {
		parent = last
	}
	return Object{"apiVersion": gatewayGroup + "/v1", "kind": "ListenerSet", "metadata": g.meta(shape.namespace, shape.name, nil),
		"spec": Object{"parentRef": Object{"name": parent.name, "namespace": "a"}, "listeners": listeners}}
}

func (g *gen) route(name string) Object {
	shape := routeShape{namespace: g.pick("a", "a", "b"), name: name, labels: map[string]any{"app": g.pick("x", "y")}}
	var parents []any
	seen := map[string]bool{}
	for range 1 + g.r.IntN(2) {
		ref := Object{}
		if len(g.sets) > 0 && g.chance(0.3) {
			ls := g.sets[0]
			ref["group"], ref["kind"], ref["name"], ref["namespace"] = gatewayGroup, "ListenerSet", ls.name, ls.namespace
			if g.chance(0.3) {
				ref["sectionName"] = g.pick(ls.listeners...)
			}
		} else {
			gw := g.gateways[g.r.IntN(len(g.gateways))]
			ref["name"], ref["namespace"] = gw.name, "a"
			if g.chance(0.3) {
				ref["sectionName"] = g.pick(gw.listeners...)
			}
		}
		// The CRD refuses two references to one parent unless each names its own section;
		// keep one reference per parent.
		if parent := fmt.Sprint(ref["kind"], ref["name"]); !seen[parent] {
			seen[parent] = true
			parents = append(parents, ref)
		}
	}
	spec := Object{"parentRefs": parents}
	var hostnames []any
	for range g.r.IntN(3) {
		hostnames = append(hostnames, g.pick("foo.example.com", "bar.example.com", "*.example.com", "a.foo.example.com", "other.test"))
	}
	if len(hostnames) > 0 {
		spec["hostnames"] = dedupe(hostnames)
	}
	var rules []any
	for i := range 1 + g.r.IntN(2) {
		rule := Object{
			"matches":     []any{Object{"path": Object{"type": "PathPrefix", "value": fmt.Sprintf("/%s/%d", name, i)}}},
			"backendRefs": []any{Object{"name": "svc", "port": 80}},
		}
		rn := ""
		if g.chance(0.5) {
			rn = fmt.Sprintf("rule%d", i)
			rule["name"] = rn
		}
		shape.rules = append(shape.rules, rn)
		rules = append(rules, rule)
	}
	spec["rules"] = rules
	g.routes = append(g.routes, shape)
	return Object{"apiVersion": gatewayGroup + "/v1", "kind": "HTTPRoute", "metadata": g.meta(shape.namespace, name, shape.labels), "spec": spec}
}

func dedupe(list []any) []any {
	seen := map[string]bool{}
	out := list[:0]
	for _, v := range list {
		if k := fmt.Sprint(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// policyKind describes what the generator may write for one Envoy Gateway kind: the
// target kinds its CRD admits among those generated, whether it takes mergeType (on xRoute
// targets only, the CRD's CEL), and the bodies it draws from.
type policyKind struct {
	kind string
	// services: the kind targets Services (Gateway API's BackendTLSPolicy), not Gateways.
	services  bool
	routes    bool
	mergeType bool
	bodies    []func(g *gen) Object
}

var policyKinds = []policyKind{
	{kind: "BackendTrafficPolicy", routes: true, mergeType: true, bodies: []func(g *gen) Object{
		func(g *gen) Object {
			return Object{"timeout": Object{"http": Object{"requestTimeout": g.pick("5s", "10s")}}}
		},
		func(g *gen) Object { return Object{"retry": Object{"numRetries": 2 + g.r.IntN(2)}} },
		func(g *gen) Object {
			return Object{"loadBalancer": Object{"type": g.pick("RoundRobin", "Random")}}
		},
	}},
	{kind: "SecurityPolicy", routes: true, mergeType: true, bodies: []func(g *gen) Object{
		func(g *gen) Object {
			return Object{"cors": Object{"allowOrigins": []any{g.pick("https://a.example.com", "https://b.example.com")}}}
		},
		func(g *gen) Object { return Object{"authorization": Object{"defaultAction": g.pick("Allow", "Deny")}} },
		func(g *gen) Object {
			ref := Object{"name": "svc", "port": 80}
			if g.chance(0.6) {
				ref["namespace"] = g.pick("a", "b")
			}
			return Object{"extAuth": Object{"http": Object{"backendRefs": []any{ref}}}}
		},
	}},
	{kind: "BackendTLSPolicy", services: true, bodies: []func(g *gen) Object{
		func(g *gen) Object {
			return Object{"validation": Object{"hostname": g.pick("svc.example.com", "other.example.com"), "wellKnownCACertificates": "System"}}
		},
	}},
	{kind: "ClientTrafficPolicy", bodies: []func(g *gen) Object{
		func(g *gen) Object {
			return Object{"timeout": Object{"http": Object{"idleTimeout": g.pick("5s", "30s")}}}
		},
		func(g *gen) Object {
			return Object{"clientIPDetection": Object{"xForwardedFor": Object{"numTrustedHops": 1 + g.r.IntN(2)}}}
		},
	}},
}

func (g *gen) policies() []Object {
	n := 2 + g.r.IntN(4)
	// Creation order is a permutation of the names, so that name order tells nothing.
	order := g.r.Perm(n)
	out := make([]Object, n)
	var prev Object
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		if prev != nil && g.chance(0.2) {
			prev = g.twin(prev, name, order[i])
		} else {
			prev = g.policy(name, order[i])
		}
		out[order[i]] = prev
	}
	return out
}

// twin draws a policy of the kind and namespace of p with p's targets and a body of its
// own: a second policy at one attachment point, where same-level conflicts are judged,
// through Envoy Gateway's Gateways or only another implementation's.
func (g *gen) twin(p Object, name string, created int) Object {
	kind, _ := p["kind"].(string)
	pk := policyKinds[slices.IndexFunc(policyKinds, func(k policyKind) bool { return k.kind == kind })]
	spec := pk.bodies[g.r.IntN(len(pk.bodies))](g)
	from, _ := p["spec"].(Object)
	for _, field := range []string{"targetRefs", "targetSelectors", "mergeType"} {
		if v, ok := from[field]; ok {
			spec[field] = v
		}
	}
	meta := g.meta(p["metadata"].(Object)["namespace"].(string), name, nil)
	meta["creationTimestamp"] = epoch.Add(time.Duration(created) * time.Second).Format(time.RFC3339)
	return Object{"apiVersion": p["apiVersion"], "kind": kind, "metadata": meta, "spec": spec}
}

func (g *gen) policy(name string, created int) Object {
	pk := policyKinds[g.r.IntN(len(policyKinds))]
	namespace := g.pick("a", "a", "b")
	spec := pk.bodies[g.r.IntN(len(pk.bodies))](g)
	onRoutes := pk.routes && g.chance(0.6)
	apiVersion := egVersion
	switch {
	case pk.services:
		apiVersion = gatewayGroup + "/v1"
		ref := Object{"group": "", "kind": "Service", "name": "svc"}
		if g.chance(0.5) {
			ref["sectionName"] = g.pick("http", "metrics")
		}
		spec["targetRefs"] = []any{ref}
	case !pk.routes && g.chance(0.15):
		spec["targetSelectors"] = []any{Object{"group": gatewayGroup, "kind": "Gateway", "matchLabels": Object{"tier": g.pick("edge", "internal")}}}
	case onRoutes && g.chance(0.25):
		spec["targetSelectors"] = []any{Object{"group": gatewayGroup, "kind": "HTTPRoute", "matchLabels": Object{"app": g.pick("x", "y")}}}
	default:
		var refs []any
		for range 1 + g.r.IntN(2) {
			refs = append(refs, g.targetRef(onRoutes))
		}
		spec["targetRefs"] = dedupe(refs)
	}
	if onRoutes && pk.mergeType && g.chance(0.3) {
		spec["mergeType"] = g.pick("StrategicMerge", "JSONMerge")
	}
	meta := g.meta(namespace, name, nil)
	meta["creationTimestamp"] = epoch.Add(time.Duration(created) * time.Second).Format(time.RFC3339)
	return Object{"apiVersion": apiVersion, "kind": pk.kind, "metadata": meta, "spec": spec}
}

// targetRef names a route (and maybe one of its rules), or a Gateway or ListenerSet (and
// maybe one of its listeners); now and then a section that does not exist.
func (g *gen) targetRef(onRoutes bool) any {
	ref := Object{"group": gatewayGroup}
	var sections []string
	if onRoutes {
		rt := g.routes[g.r.IntN(len(g.routes))]
		ref["kind"], ref["name"] = "HTTPRoute", rt.name
		for _, rn := range rt.rules {
			if rn != "" {
				sections = append(sections, rn)
			}
		}
	} else if len(g.sets) > 0 && g.chance(0.3) {
		ref["kind"], ref["name"] = "ListenerSet", g.sets[0].name
		sections = g.sets[0].listeners
	} else {
		gw := g.gateways[g.r.IntN(len(g.gateways))]
		ref["kind"], ref["name"] = "Gateway", gw.name
		sections = gw.listeners
	}
	switch {
	case len(sections) > 0 && g.chance(0.4):
		ref["sectionName"] = g.pick(sections...)
	case g.chance(0.05):
		ref["sectionName"] = "missing"
	}
	return ref
}
