package topology

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

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
	route := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, routeWithEveryKindOfRuleName))
	assert.True(t, route.HasSections())
	assert.True(t, route.HasSection("read"))
	assert.True(t, route.HasSection("write"))
	assert.False(t, route.HasSection(""), "a rule without a name is no section")
	assert.False(t, route.HasSection("rea"), "a prefix of a name is not the name")
	assert.False(t, route.HasSection("read\x00write"), "two names are not one")

	other := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: other, namespace: apps}
spec: {rules: [{name: read}, {name: write}]}
`))
	assert.True(t, other.HasSection("write"))
	assert.Equal(t, "read\x00write\x00", route.sections, "each name once, in order")
	assert.Same(t, unsafe.StringData(route.sections), unsafe.StringData(other.sections), "one copy of a list that repeats")

	unnamed := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: unnamed, namespace: apps}
spec: {rules: [{}]}
`))
	assert.True(t, unnamed.HasSections(), "the kind has sections even when this route names none")
	assert.False(t, unnamed.HasSection("read"))

	ns := NewObject(kinds.CoreGroup, "Namespace", decode(t, `metadata: {name: apps}`))
	assert.False(t, ns.HasSections())
}

func TestRuleNamesOfARoute(t *testing.T) {
	route := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, routeWithEveryKindOfRuleName))
	var names []string
	for i := range route.Route.Rules {
		names = append(names, route.Route.RuleName(i))
	}
	assert.Equal(t, []string{"read", "write", "read", "", ""}, names, "by index, as written: unnamed and repeated rules keep their place")

	same := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: same-template, namespace: other}
spec: {rules: [{name: read}, {name: write}, {name: read}, {}, {name: ""}]}
`))
	assert.Equal(t, []string{"read", "write", "read", "", ""}, []string{same.Route.RuleName(0), same.Route.RuleName(1), same.Route.RuleName(2), same.Route.RuleName(3), same.Route.RuleName(4)})
	assert.Equal(t, "same-template", same.Name)
	inText(t, same, same.Name, same.Route.RuleName(0), same.Route.RuleName(1))

	// Routes hold every rule of the cluster: a rule must be nothing the collector scans.
	assert.Zero(t, pointerWords(reflect.TypeFor[RuleInfo]()))
}

// pointerWords counts the words of a type the garbage collector reads as pointers: the
// cost of one value of it in every cycle's marking, whatever those words point at.
func pointerWords(typ reflect.Type) int {
	switch typ.Kind() {
	case reflect.String, reflect.Slice, reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return 1
	case reflect.Interface:
		return 2
	case reflect.Array:
		return typ.Len() * pointerWords(typ.Elem())
	case reflect.Struct:
		n := 0
		for i := range typ.NumField() {
			n += pointerWords(typ.Field(i).Type)
		}
		return n
	}
	return 0
}

func TestPointerWordsOfAStoredRoute(t *testing.T) {
	// A snapshot holds tens of thousands of routes: their pointer words are most of what the
	// collector reads on every cycle. References are spans of the route's text: with
	// TargetKeys, a route with one parent and one backend was 26 words.
	assert.Zero(t, pointerWords(reflect.TypeFor[parentRef]()))
	assert.Zero(t, pointerWords(reflect.TypeFor[backendIndex]()))
	// An upper bound: a field added to a route must be weighed against it.
	assert.LessOrEqual(t, pointerWords(reflect.TypeFor[struct {
		Object
		routeTopology
	}]()), 15)
}

func TestRouteReferencesReadBackFromItsText(t *testing.T) {
	gateway := NewObject(kinds.GatewayGroup, "Gateway", decode(t, `
metadata: {name: edge, namespace: infra}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
`))
	service := NewObject(kinds.CoreGroup, "Service", decode(t, `
metadata: {name: shop, namespace: apps}
spec: {ports: [{name: http, port: 80}]}
`))
	route := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: shop, namespace: apps}
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: http}]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
`))
	assert.Equal(t, []ParentRef{{key: gateway.Key(), SectionName: "http"}}, slices.Collect(route.Route.ParentRefs()))
	assert.Equal(t, []BackendRef{{key: service.Key(), Port: 80}}, slices.Collect(route.Route.AllBackends()))
	// What they read back are slices of the route's one text, as is its name.
	parent, backend := slices.Collect(route.Route.ParentRefs())[0], slices.Collect(route.Route.AllBackends())[0]
	inText(t, route, route.Name, parent.key.Name, parent.key.Namespace, parent.SectionName, backend.key.Name, backend.key.Kind)

	// A route naming what no snapshot holds keeps the names it wrote.
	orphan := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: orphan, namespace: apps}
spec: {parentRefs: [{name: elsewhere}], rules: [{backendRefs: [{name: gone, port: 80}]}]}
`))
	assert.Equal(t, []ParentRef{{key: policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "apps", Name: "elsewhere"}}}, slices.Collect(orphan.Route.ParentRefs()))
	assert.Equal(t, []BackendRef{{key: policy.TargetKey{Group: kinds.CoreGroup, Kind: "Service", Namespace: "apps", Name: "gone"}, Port: 80}}, slices.Collect(orphan.Route.AllBackends()))
}

// inText asserts that each non-empty string lies in the route's text (RouteInfo).
func inText(t *testing.T, route *Object, strs ...string) {
	t.Helper()
	from := uintptr(unsafe.Pointer(unsafe.StringData(route.Route.text)))
	to := from + uintptr(len(route.Route.text))
	for _, s := range strs {
		require.NotEmpty(t, s)
		at := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		assert.True(t, at >= from && at+uintptr(len(s)) <= to, "%q is not in the text of route %s", s, route.Name)
	}
}

func TestPackedKeysRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 300) // a length of two varint bytes
	for _, k := range []policy.TargetKey{
		{},
		{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "edge", Section: "http"},
		{Kind: "Service", Namespace: "apps", Name: "shop"},
		{Group: "a\x00b", Kind: "\x00", Namespace: "\x00\x00", Name: "n\x00", Section: "\x00s"},
		{Group: long, Kind: long + "k", Namespace: "", Name: long + "n", Section: long},
		{Name: "ünïcödé", Section: "\xff\x80"},
	} {
		assert.Equal(t, k, unpackKey(string(appendKey(nil, k))), "%q", k)
	}
	assert.Equal(t, policy.TargetKey{}, unpackKey("\x05ab"), "a length past the end")
	assert.Equal(t, policy.TargetKey{}, unpackKey("\xff"), "a varint that never ends")
}

func TestTopologyListsOfEveryLength(t *testing.T) {
	// The first parentRef, the first backend and the first two ports live in the object's
	// own allocation; longer lists move out. Every length must read back as written, and
	// every list is clipped, so an append can never write into another list's room.
	one := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: one, namespace: apps}
spec: {parentRefs: [{name: a}], rules: [{backendRefs: [{name: s1, port: 80}, {name: s1, port: 81}]}]}
`))
	three := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: three, namespace: apps}
spec:
  parentRefs: [{name: a}, {name: b, sectionName: http}, {name: c, port: 8080}]
  rules: [{backendRefs: [{name: s1}, {name: s2}]}, {backendRefs: [{name: s3}]}]
`))
	none := NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: none, namespace: apps}
spec: {rules: [{}]}
`))
	parents := func(o *Object) (out []string) {
		for p := range o.Route.ParentRefs() {
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
		return NewObject(kinds.CoreGroup, "Service", decode(t, `metadata: {name: s, namespace: apps}
spec: {ports: `+doc+`}`)).Service.Ports
	}
	assert.Empty(t, ports(`[]`))
	assert.Equal(t, []PortInfo{{Name: "http", Port: 80}, {Name: "https", Port: 443}}, ports(`[{name: http, port: 80}, {name: https, port: 443}]`))
	assert.Equal(t, []PortInfo{{Name: "a", Port: 1}, {Name: "b", Port: 2}, {Name: "c", Port: 3}}, ports(`[{name: a, port: 1}, {name: b, port: 2}, {name: c, port: 3}]`))

	for _, o := range []*Object{one, three, none} {
		assert.Equal(t, len(o.Route.parents), cap(o.Route.parents), "route %s: parentRefs clipped", o.Name)
		assert.Equal(t, len(o.Route.backendKeys), cap(o.Route.backendKeys), "route %s: backends clipped", o.Name)
	}
	svc := ports(`[{name: http, port: 80}]`)
	assert.Equal(t, len(svc), cap(svc), "ports clipped")

	// The short lists are in the room of the object's own allocation (allocWith puts the
	// topology right after the Object; RouteInfo and ServiceInfo open their room structs).
	assert.Same(t, &(*routeTopology)(unsafe.Pointer(one.Route)).firstParent[0], &one.Route.parents[0])
	assert.Same(t, &(*routeTopology)(unsafe.Pointer(one.Route)).firstBackend[0], &one.Route.backendKeys[0])
	two := NewObject(kinds.CoreGroup, "Service", decode(t, `metadata: {name: s, namespace: apps}
spec: {ports: [{name: http, port: 80}, {name: https, port: 443}]}`))
	assert.Same(t, &(*serviceTopology)(unsafe.Pointer(two.Service)).firstPorts[1], &two.Service.Ports[1])

	// A route or Service and its topology are one allocation.
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { allocObject(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "HTTPRoute"}) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { allocObject(schema.GroupKind{Kind: "Service"}) }))
}

// decode parses one YAML object.
func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}
