package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func strs(paths []topology.ContextPath) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p.String())
	}
	return out
}

func TestPathsThrough(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.Topology, `
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
	color := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	btls := rulestest.MustRow(t, table, kinds.GatewayGroup, "BackendTLSPolicy")

	// r1 parents to gw without a section; listeners http and https allow only infra (Same).
	assert.Empty(t, strs(topology.PathsThrough(snap, color, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})))
	assert.Equal(t, []string{
		"Gateway infra/gw > ListenerSet infra/extra > Listener tenant > HTTPRoute app/r2 > Rule main > Service app/b1",
	}, strs(topology.PathsThrough(snap, color, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"})))
	assert.Equal(t, []string{
		"Gateway infra/gw > ListenerSet infra/extra > Listener tenant > HTTPRoute app/r2 > Rule main > Service app/b1",
	}, strs(topology.PathsThrough(snap, color, policy.TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1"})), "up from a backend")
	assert.Equal(t, []string{"Service app/b1 > Port https"},
		strs(topology.PathsThrough(snap, btls, policy.TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1"})), "Direct kinds do not span")
	assert.Empty(t, topology.PathsThrough(snap, btls, policy.TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1", Section: "grpc"}))
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
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, servicePortWorld)
	row := portPolicyRow(t, table)
	assert.Equal(t, []string{
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule by-number > Service app/b1 > Port https",
		"Gateway app/gw > Listener http > HTTPRoute app/r1 > Rule no-port > Service app/b1 > Port https",
	}, strs(topology.PathsThrough(snap, row, policy.TargetKey{Group: "", Kind: "Service", Namespace: "app", Name: "b1", Section: "https"})))
}

func TestPathsOfSeveralTargetsKeepsEachTargetsOwnPaths(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, servicePortWorld)
	row := portPolicyRow(t, table)
	p := policy.NewPolicy(row, rulestest.Decode(t, `
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
	assert.Equal(t, want, strs(topology.PathsOf(snap, p)))
	assert.Equal(t, want, strs(topology.AppendPathsOf(snap, p, make([]topology.ContextPath, 0, 64))), "into a buffer with room")
}

// portPolicyRow adds an Inherited kind whose effective target is a Service port (a row from
// the config file; the built-in Inherited kinds' paths end above the Service) and returns it.
func portPolicyRow(t *testing.T, table *kinds.KindTable) *kinds.KindRow {
	t.Helper()
	portPolicy, ok := kinds.DiscoveredRow("example.com", "PortPolicy", kinds.Namespaced, "Inherited")
	require.True(t, ok)
	portPolicy.EffectiveTarget = "ServicePort"
	require.NoError(t, table.Put(portPolicy))
	return rulestest.MustRow(t, table, "example.com", "PortPolicy")
}

// A ListenerSet adds listeners only when its Gateway's allowedListeners admit its namespace:
// unset means None; Same admits the Gateway's namespace; Selector the namespaces it selects
// (Gateway API ListenerSet; conformance ListenerSetAllowedListeners*). Routes attached to a
// ListenerSet not accepted reach nothing.
func TestListenerSetAcceptedByAllowedListeners(t *testing.T) {
	table := kinds.BuiltinKindTable()
	color := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	world := func(allowed, setNamespace string) string {
		return `
apiVersion: v1
kind: Namespace
metadata: {name: tenant, labels: {shared-gateway: "yes"}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  ` + allowed + `
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: ` + setNamespace + `}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: tenant, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: app}
spec:
  parentRefs: [{name: extra, namespace: ` + setNamespace + `, kind: ListenerSet}]
  rules: [{name: main, backendRefs: [{name: b1, port: 443}]}]`
	}
	cases := map[string]struct {
		allowed, namespace string
		accepted           bool
	}{
		"unset is None":                       {allowed: "", namespace: "infra"},
		"None":                                {allowed: "allowedListeners: {namespaces: {from: None}}", namespace: "infra"},
		"Same, same namespace":                {allowed: "allowedListeners: {namespaces: {from: Same}}", namespace: "infra", accepted: true},
		"Same, another namespace":             {allowed: "allowedListeners: {namespaces: {from: Same}}", namespace: "tenant"},
		"All":                                 {allowed: "allowedListeners: {namespaces: {from: All}}", namespace: "tenant", accepted: true},
		"Selector matching the namespace":     {allowed: `allowedListeners: {namespaces: {from: Selector, selector: {matchLabels: {shared-gateway: "yes"}}}}`, namespace: "tenant", accepted: true},
		"Selector not matching the namespace": {allowed: `allowedListeners: {namespaces: {from: Selector, selector: {matchLabels: {shared-gateway: "no"}}}}`, namespace: "tenant"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, world(tc.allowed, tc.namespace))
			want := []string{}
			if tc.accepted {
				want = []string{"Gateway infra/gw > ListenerSet " + tc.namespace + "/extra > Listener tenant > HTTPRoute app/r2 > Rule main > Service app/b1"}
			}
			gw := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"}
			set := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "ListenerSet", Namespace: tc.namespace, Name: "extra"}
			route := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r2"}
			assert.Equal(t, want, strs(topology.PathsThrough(snap, color, gw)), "down from the Gateway")
			assert.Equal(t, want, strs(topology.PathsThrough(snap, color, set)), "down from the ListenerSet")
			assert.Equal(t, want, strs(topology.PathsThrough(snap, color, route)), "up from the route")
		})
	}
}

// A Gateway's listener and a ListenerSet's listener of the same name are different
// sections: a policy on the Gateway's section reaches only the Gateway's own listener.
func TestGatewaySectionIsNotAListenerSetListener(t *testing.T) {
	table := kinds.BuiltinKindTable()
	color := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	snap := rulestest.World(t, table, rulestest.Topology, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: app}
spec:
  parentRefs: [{name: extra, namespace: infra, kind: ListenerSet}]
  rules: [{name: main, backendRefs: [{name: b1, port: 443}]}]`)
	section := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw", Section: "http"}
	assert.Empty(t, strs(topology.PathsThrough(snap, color, section)), "r2 hangs from the ListenerSet's http, not the Gateway's")
	whole := section
	whole.Section = ""
	assert.Equal(t, []string{"Gateway infra/gw > ListenerSet infra/extra > Listener http > HTTPRoute app/r2 > Rule main > Service app/b1"},
		strs(topology.PathsThrough(snap, color, whole)), "the whole Gateway reaches it")
}

// An HTTPRoute written without rules is stored with one defaulted rule (Gateway API's
// default for HTTPRouteSpec.Rules), so a policy on it reaches a path offline as in a cluster.
func TestHTTPRouteWithoutRulesHasTheDefaultedRule(t *testing.T) {
	table := kinds.BuiltinKindTable()
	btp := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy") // paths end at the rule
	snap := rulestest.World(t, table, rulestest.Topology, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bare, namespace: infra}
spec:
  parentRefs: [{name: gw, sectionName: http}]`)
	assert.Equal(t, []string{"Gateway infra/gw > Listener http > HTTPRoute infra/bare > Rule 0"},
		strs(topology.PathsThrough(snap, btp, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "infra", Name: "bare"})))
}
