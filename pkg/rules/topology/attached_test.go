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

// attachedWorld is a Gateway with two listeners, a ListenerSet it accepts and one it does
// not, and routes parented in each way a parentRef can select listeners.
const attachedWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com"}
  - {name: alt, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: same, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners: [{name: http, protocol: HTTP, port: 81}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: other, namespace: app}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: http, protocol: HTTP, port: 82, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: infra}
spec:
  hostnames: [a.b.example.com]
  parentRefs:
  - {name: gw}
  - {name: gw, sectionName: alt}
  - {name: gw, port: 443}
  - {name: same, kind: ListenerSet}
  - {name: other, namespace: app, kind: ListenerSet}
  - {name: missing}`

func TestRouteAttachments(t *testing.T) {
	snap := rulestest.World(t, kinds.BuiltinKindTable(), attachedWorld)
	route, ok := snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "infra", Name: "both"})
	require.True(t, ok)

	type attachment struct {
		parent    string
		listeners []string
	}
	var got []attachment
	for _, a := range topology.RouteAttachments(snap, route) {
		k := a.Ref.Key()
		got = append(got, attachment{k.Kind + " " + k.Namespace + "/" + k.Name + "#" + a.Ref.SectionName, a.Listeners})
	}
	assert.Equal(t, []attachment{
		// A wildcard listener hostname admits a name several labels under it.
		{"Gateway infra/gw#", []string{"http", "alt"}},
		{"Gateway infra/gw#alt", []string{"alt"}},
		{"Gateway infra/gw#", nil}, // port 443: no listener
		// A parentRef to the Gateway never reaches its ListenerSets' listeners; one to an
		// accepted ListenerSet reaches the set's own.
		{"ListenerSet infra/same#", []string{"http"}},
		{"ListenerSet app/other#", nil}, // allowedListeners Same: not accepted
		{"Gateway infra/missing#", nil},
	}, got)
}

func TestAttachedRoutes(t *testing.T) {
	snap := rulestest.World(t, kinds.BuiltinKindTable(), attachedWorld)
	get := func(kind, ns, name string) *topology.Object {
		o, ok := snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: kind, Namespace: ns, Name: name})
		require.True(t, ok)
		return o
	}
	// The route's two parentRefs selecting alt count it once there.
	assert.Equal(t, map[string]int{"http": 1, "alt": 1}, topology.AttachedRoutes(snap, get("Gateway", "infra", "gw")))
	assert.Equal(t, map[string]int{"http": 1}, topology.AttachedRoutes(snap, get("ListenerSet", "infra", "same")))
	assert.Equal(t, map[string]int{"http": 0}, topology.AttachedRoutes(snap, get("ListenerSet", "app", "other")), "a ListenerSet its Gateway does not accept has no routes")
}
