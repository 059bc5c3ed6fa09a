package rules

import (
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestObjectTableStoresReplacesAndRemoves(t *testing.T) {
	route := func(name string) *Object {
		return &Object{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: name}
	}
	table := newObjectTable()
	a, b := route("a"), route("b")
	table.put(a)
	table.put(b)

	got, ok := table.get(a.Key())
	require.True(t, ok)
	assert.Same(t, a, got)
	_, ok = table.get(route("c").Key())
	assert.False(t, ok, "a key never stored")

	newer := route("a")
	table.put(newer)
	got, _ = table.get(a.Key())
	assert.Same(t, newer, got, "a put under the same key replaces")
	assert.Len(t, table.bySlot, 2)

	table.remove(a.Key())
	_, ok = table.get(a.Key())
	assert.False(t, ok)
	assert.Len(t, table.bySlot, 1)
	table.remove(a.Key()) // removing what is gone is no error

	c := route("c")
	table.put(c)
	assert.Len(t, table.slots, 2, "the freed slot is used again")
	got, _ = table.get(c.Key())
	assert.Same(t, c, got)
	got, _ = table.get(b.Key())
	assert.Same(t, b, got, "reusing a slot leaves the others alone")
}

func TestObjectTableNeverAnswersWithAnotherKeysObject(t *testing.T) {
	// Were two keys ever to share a keyHash, the slot found holds the other key's object:
	// the lookup must report absent, not return it.
	table := newObjectTable()
	a := &Object{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a"}
	table.put(a)
	other := TargetKey{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "other"}
	table.bySlot[hashKey(other)] = table.bySlot[hashKey(a.Key())]

	_, ok := table.get(other)
	assert.False(t, ok)
}

func TestHashKeyTellsEveryFieldApart(t *testing.T) {
	base := TargetKey{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"}
	seen := map[keyHash]TargetKey{hashKey(base): base}
	for _, k := range []TargetKey{
		{Group: "", Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"},
		{Group: GatewayGroup, Kind: "GRPCRoute", Namespace: "apps", Name: "a", Section: "rule-1"},
		{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "sa", Section: "rule-1"}, // same letters, moved across fields
		{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: ""},
		{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-2"},
	} {
		h := hashKey(k)
		_, dup := seen[h]
		assert.False(t, dup, "%v shares a hash", k)
		seen[h] = k
	}
	assert.Equal(t, hashKey(base), hashKey(TargetKey{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"}),
		"equal keys hash alike")
}

// routeWithEveryKindOfRuleName has named, repeated, unnamed and empty-named rules.
const routeWithEveryKindOfRuleName = `
metadata: {name: r, namespace: apps}
spec:
  rules:
  - name: read
  - name: write
  - name: read
  - {}
  - name: ""
`

func TestSectionsOfAnObject(t *testing.T) {
	route := NewObject(GatewayGroup, "HTTPRoute", decode(t, routeWithEveryKindOfRuleName))
	assert.True(t, route.HasSections())
	assert.True(t, route.HasSection("read"))
	assert.True(t, route.HasSection("write"))
	assert.False(t, route.HasSection(""), "a rule without a name is no section")
	assert.False(t, route.HasSection("rea"), "a prefix of a name is not the name")
	assert.False(t, route.HasSection("read\x00write"), "two names are not one")

	other := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: other, namespace: apps}
spec: {rules: [{name: read}, {name: write}]}
`))
	assert.True(t, other.HasSection("write"))
	assert.Equal(t, "read\x00write\x00", route.sections, "each name once, in order")
	assert.Same(t, unsafe.StringData(route.sections), unsafe.StringData(other.sections), "one copy of a list that repeats")

	unnamed := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: unnamed, namespace: apps}
spec: {rules: [{}]}
`))
	assert.True(t, unnamed.HasSections(), "the kind has sections even when this route names none")
	assert.False(t, unnamed.HasSection("read"))

	ns := NewObject(CoreGroup, "Namespace", decode(t, `metadata: {name: apps}`))
	assert.False(t, ns.HasSections())
}

func TestRuleNamesOfARoute(t *testing.T) {
	route := NewObject(GatewayGroup, "HTTPRoute", decode(t, routeWithEveryKindOfRuleName))
	var names []string
	for i := range route.Route.Rules {
		names = append(names, route.Route.RuleName(i))
	}
	assert.Equal(t, []string{"read", "write", "read", "", ""}, names, "by index, as written: unnamed and repeated rules keep their place")

	same := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: same-template, namespace: other}
spec: {rules: [{name: read}, {name: write}, {name: read}, {}, {name: ""}]}
`))
	assert.Same(t, unsafe.StringData(route.Route.ruleNames), unsafe.StringData(same.Route.ruleNames), "routes made from one template share their names")

	// Routes hold every rule of the cluster: a rule must be nothing the collector scans.
	assert.Zero(t, pointerFields(reflect.TypeFor[RuleInfo]()))
}

// pointerFields counts the fields of a struct the garbage collector has to scan.
func pointerFields(typ reflect.Type) int {
	n := 0
	for i := range typ.NumField() {
		switch typ.Field(i).Type.Kind() {
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Bool:
		default:
			n++
		}
	}
	return n
}

func TestRoutesShareTheNamesOfTheObjectsTheyReference(t *testing.T) {
	gatewayDoc := `
metadata: {name: edge, namespace: infra}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
`
	serviceDoc := `
metadata: {name: shop, namespace: apps}
spec: {ports: [{name: http, port: 80}]}
`
	routeDoc := func(name string) map[string]any {
		return decode(t, `
metadata: {name: `+name+`, namespace: apps}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
`)
	}
	snap := NewMemorySnapshot()
	before := NewObject(GatewayGroup, "HTTPRoute", routeDoc("before")) // arrives first
	snap.AddObject(before)
	gateway := NewObject(GatewayGroup, "Gateway", decode(t, gatewayDoc))
	snap.AddObject(gateway)
	service := NewObject(CoreGroup, "Service", decode(t, serviceDoc))
	snap.AddObject(service)
	after := NewObject(GatewayGroup, "HTTPRoute", routeDoc("after")) // arrives last
	snap.AddObject(after)

	for _, route := range []*Object{before, after} {
		assert.Same(t, unsafe.StringData(gateway.Name), unsafe.StringData(route.Route.ParentRefs[0].key.Name), "route %s: parent", route.Name)
		assert.Same(t, unsafe.StringData(service.Name), unsafe.StringData(route.Route.backendKeys[0].Name), "route %s: backend", route.Name)
	}
	assert.ElementsMatch(t, []*Object{before, after}, snap.RoutesByParent(gateway.Key()))
	assert.ElementsMatch(t, []*Object{before, after}, snap.RoutesByBackend(service.Key()))

	// A new version of the Service: the routes follow it, and still find it.
	newer := NewObject(CoreGroup, "Service", decode(t, serviceDoc))
	snap.AddObject(newer)
	assert.Same(t, unsafe.StringData(newer.Name), unsafe.StringData(before.Route.backendKeys[0].Name))
	assert.ElementsMatch(t, []*Object{before, after}, snap.RoutesByBackend(newer.Key()))

	// A route naming what the snapshot does not hold keeps its own name.
	orphan := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: orphan, namespace: apps}
spec: {parentRefs: [{name: elsewhere}], rules: [{backendRefs: [{name: gone, port: 80}]}]}
`))
	snap.AddObject(orphan)
	assert.Equal(t, "elsewhere", orphan.Route.ParentRefs[0].key.Name)
	assert.Equal(t, "gone", orphan.Route.backendKeys[0].Name)
}

func TestTopologyListsOfEveryLength(t *testing.T) {
	// The first parentRef, the first backend and the first two ports live in the object's
	// own allocation; longer lists move out. Every length must read back as written, and
	// every list is clipped, so an append can never write into another list's room.
	one := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: one, namespace: apps}
spec: {parentRefs: [{name: a}], rules: [{backendRefs: [{name: s1, port: 80}, {name: s1, port: 81}]}]}
`))
	three := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: three, namespace: apps}
spec:
  parentRefs: [{name: a}, {name: b, sectionName: http}, {name: c, port: 8080}]
  rules: [{backendRefs: [{name: s1}, {name: s2}]}, {backendRefs: [{name: s3}]}]
`))
	none := NewObject(GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: none, namespace: apps}
spec: {rules: [{}]}
`))
	parents := func(o *Object) (out []string) {
		for _, p := range o.Route.ParentRefs {
			out = append(out, p.Key().Name+"/"+p.SectionName+"/"+strconv.FormatInt(p.Port, 10))
		}
		return out
	}
	backends := func(o *Object) (out []string) {
		for b := range o.Route.AllBackends() {
			out = append(out, b.Key().Name+":"+strconv.FormatInt(b.Port, 10))
		}
		return out
	}
	assert.Equal(t, []string{"a//0"}, parents(one))
	assert.Equal(t, []string{"s1:80", "s1:81"}, backends(one))
	assert.Equal(t, []string{"a//0", "b/http/0", "c//8080"}, parents(three))
	assert.Equal(t, []string{"s1:0", "s2:0", "s3:0"}, backends(three))
	assert.Empty(t, parents(none))
	assert.Empty(t, backends(none))

	ports := func(doc string) []PortInfo {
		return NewObject(CoreGroup, "Service", decode(t, `metadata: {name: s, namespace: apps}
spec: {ports: `+doc+`}`)).Service.Ports
	}
	assert.Empty(t, ports(`[]`))
	assert.Equal(t, []PortInfo{{Name: "http", Port: 80}, {Name: "https", Port: 443}}, ports(`[{name: http, port: 80}, {name: https, port: 443}]`))
	assert.Equal(t, []PortInfo{{Name: "a", Port: 1}, {Name: "b", Port: 2}, {Name: "c", Port: 3}}, ports(`[{name: a, port: 1}, {name: b, port: 2}, {name: c, port: 3}]`))

	for _, o := range []*Object{one, three, none} {
		assert.Equal(t, len(o.Route.ParentRefs), cap(o.Route.ParentRefs), "route %s: parentRefs clipped", o.Name)
		assert.Equal(t, len(o.Route.backendKeys), cap(o.Route.backendKeys), "route %s: backends clipped", o.Name)
	}
	svc := ports(`[{name: http, port: 80}]`)
	assert.Equal(t, len(svc), cap(svc), "ports clipped")

	// The short lists are in the room of the object's own allocation (allocWith puts the
	// topology right after the Object; RouteInfo and ServiceInfo open their room structs).
	assert.Same(t, &(*routeTopology)(unsafe.Pointer(one.Route)).firstParent[0], &one.Route.ParentRefs[0])
	assert.Same(t, &(*routeTopology)(unsafe.Pointer(one.Route)).firstBackend[0], &one.Route.backendKeys[0])
	two := NewObject(CoreGroup, "Service", decode(t, `metadata: {name: s, namespace: apps}
spec: {ports: [{name: http, port: 80}, {name: https, port: 443}]}`))
	assert.Same(t, &(*serviceTopology)(unsafe.Pointer(two.Service)).firstPorts[1], &two.Service.Ports[1])

	// A route or Service and its topology are one allocation.
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { allocObject(schema.GroupKind{Group: GatewayGroup, Kind: "HTTPRoute"}) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { allocObject(schema.GroupKind{Kind: "Service"}) }))
}
