package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostMatch(t *testing.T) {
	cases := []struct {
		listener string
		routes   []string
		want     bool
	}{
		{"", []string{"a.example.com"}, true},
		{"a.example.com", nil, true},
		{"a.example.com", []string{"a.example.com"}, true},
		{"*.example.com", []string{"a.example.com"}, true},
		{"a.example.com", []string{"*.example.com"}, true},
		{"*.example.com", []string{"a.b.example.com"}, false},
		{"*.example.com", []string{"example.com"}, false},
		{"*.example.com", []string{"*.example.com"}, true},
		{"*.example.com", []string{"*.other.com", "b.example.com"}, true},
		{"a.example.com", []string{"b.example.com"}, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, hostnamesIntersect(tc.listener, tc.routes), "%q vs %q", tc.listener, tc.routes)
	}
}

func TestKindAllowedByProtocol(t *testing.T) {
	route := func(kind string) *Object { return &Object{Group: GatewayGroup, Kind: kind} }
	assert.True(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "HTTPS"}))
	assert.True(t, kindAllowed(route("GRPCRoute"), ListenerInfo{Protocol: "HTTP"}))
	assert.False(t, kindAllowed(route("TCPRoute"), ListenerInfo{Protocol: "HTTP"}))
	assert.True(t, kindAllowed(route("TLSRoute"), ListenerInfo{Protocol: "TLS"}))
	assert.True(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "example.com/QUIC"}), "unknown protocols admit any kind")
	assert.False(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "HTTP", Kinds: []RouteKind{{GatewayGroup, "GRPCRoute"}}}))
}

func strs(paths []ContextPath) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p.String())
	}
	return out
}

func TestPathsThrough(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, topology, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners: [{name: tenant, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: app}
spec:
  parentRefs: [{name: extra, namespace: infra, kind: ListenerSet}]
  rules: [{name: main, backendRefs: [{name: b1, port: 443}]}]`)
	color := mustRow(t, table, "policies.controller.io", "ColorPolicy")
	btls := mustRow(t, table, GatewayGroup, "BackendTLSPolicy")

	// r1 parents to gw without a section; listeners http and https allow only infra (Same).
	assert.Empty(t, strs(PathsThrough(snap, color, TargetKey{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})))
	assert.Equal(t, []string{
		"Gateway infra/gw > ListenerSet infra/extra > Listener tenant > HTTPRoute app/r2 > Rule main > Service app/b1",
	}, strs(PathsThrough(snap, color, TargetKey{Group: GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"})))
	assert.Equal(t, []string{
		"Gateway infra/gw > ListenerSet infra/extra > Listener tenant > HTTPRoute app/r2 > Rule main > Service app/b1",
	}, strs(PathsThrough(snap, color, TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1"})), "up from a backend")
	assert.Equal(t, []string{"Service app/b1 > Port https"},
		strs(PathsThrough(snap, btls, TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1"})), "Direct kinds do not span")
	assert.Empty(t, PathsThrough(snap, btls, TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1", Section: "grpc"}))
}

func TestFoldProvenance(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {parentRefs: [{name: gw}], rules: [{name: main, backendRefs: [{name: b1, port: 80}]}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-patch, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {strategy: patch, colors: {dark: brown, light: red}, width: 2}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: rule, namespace: app, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: main}]
  colors: {light: blue}`)
	row := mustRow(t, table, "policies.controller.io", "ColorPolicy")
	paths := PathsThrough(snap, row, TargetKey{Group: GatewayGroup, Kind: "Gateway", Namespace: "app", Name: "gw"})
	if assert.Len(t, paths, 1) {
		e := Fold(snap, row, paths[0], NewUnitCache())
		assert.Equal(t, map[string]any{"colors": map[string]any{"dark": "brown", "light": "blue"}, "width": float64(2)}, e.Spec(),
			"patch defaults from the Gateway are filled under the rule's more specific value")
		assert.Equal(t, map[string]string{"colors.dark": "app/gw-patch", "colors.light": "app/rule", "width": "app/gw-patch"}, e.Sources())
	}
	gwPatch, _ := snap.GetPolicy(row.GroupKind(), "app", "gw-patch")
	im := ImpactOf(snap, gwPatch, nil)
	assert.Equal(t, Impact{Status: StatusPartiallyEnforced, Contexts: 1, PartiallyEnforced: 1,
		Overrides: []string{}, OverriddenBy: []string{"app/rule"}}, im)
	assert.Equal(t, "Patch defaults on Gateway app/gw: enforced on 0 of 1 path, partially on 1 by app/rule", im.Summary(gwPatch))
}

// servicePortWorld is a Gateway, a route whose rules send to Service ports in every way a
// backendRef can name one, and the two Services.
const servicePortWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - {name: by-number, backendRefs: [{name: b1, port: 443}]}
  - {name: no-port, backendRefs: [{name: b1}]}
  - {name: out-of-range, backendRefs: [{name: b1, port: 70000}]}
  - {name: to-b2, backendRefs: [{name: b2, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: b2, namespace: app}
spec: {ports: [{name: http, port: 80}]}`

// A backendRef's port decides which Service port a path ends at: an absent port means the
// Service's only named port, a port the Service does not have (even one no Service can
// have) reaches none of them.
func TestPathsThroughAServicePort(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, servicePortWorld)
	row := portPolicyRow(t, table)
	assert.Equal(t, []string{
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule by-number > Service app/b1 > Port https",
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule no-port > Service app/b1 > Port https",
	}, strs(PathsThrough(snap, row, TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1", Section: "https"})))
}

func TestPathsOfSeveralTargetsKeepsEachTargetsOwnPaths(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, servicePortWorld)
	row := portPolicyRow(t, table)
	p := NewPolicy(row, decode(t, `
apiVersion: example.com/v1
kind: PortPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  - {group: "", kind: Service, name: b1, sectionName: https}`))
	// The Service port's filter applies to the paths through that port only, not to the
	// route's paths found before it; a path both targets reach is listed once.
	want := []string{
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule by-number > Service app/b1 > Port https",
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule no-port > Service app/b1 > Port https",
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule out-of-range > Service app/b1 > Port 70000",
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule to-b2 > Service app/b2 > Port http",
	}
	assert.Equal(t, want, strs(PathsOf(snap, p)))
	assert.Equal(t, want, strs(pathsOf(snap, p, make([]ContextPath, 0, 64))), "into a buffer with room")
}

// portPolicyRow adds an Inherited kind whose effective target is a Service port (a row from
// the config file; the built-in Inherited kinds' paths end above the Service) and returns it.
func portPolicyRow(t *testing.T, table *KindTable) *KindRow {
	t.Helper()
	portPolicy, ok := DiscoveredRow("example.com", "PortPolicy", Namespaced, "Inherited")
	require.True(t, ok)
	portPolicy.EffectiveTarget = "ServicePort"
	require.NoError(t, table.Put(portPolicy))
	return mustRow(t, table, "example.com", "PortPolicy")
}
