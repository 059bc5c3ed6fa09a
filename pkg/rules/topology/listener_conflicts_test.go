package topology_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// set is a ListenerSet of the Gateway infra/gw in a conflicts world.
type set struct {
	namespace, name, created string
	listeners                string // a YAML list
}

// conflictsWorld is a Gateway infra/gw that accepts ListenerSets from every namespace (or
// only its own: allowed), with listeners, and its ListenerSets.
func conflictsWorld(allowed, listeners string, sets ...set) string {
	docs := []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: ` + allowed + `}}
  listeners: ` + listeners}
	for _, s := range sets {
		created := ""
		if s.created != "" {
			created = `, creationTimestamp: "` + s.created + `"`
		}
		docs = append(docs, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: `+s.name+`, namespace: `+s.namespace+created+`}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: `+s.listeners)
	}
	return strings.Join(docs, "\n---\n")
}

// conflictsOf renders the listener conflicts of infra/gw: "<owner> <listener>" to "loses to
// <owner> <listener> (<reason>, port <port>)" or "may lose to ...".
func conflictsOf(t *testing.T, snap topology.Snapshot) map[string]string {
	t.Helper()
	gw, ok := snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"})
	require.True(t, ok)
	name := func(r topology.ListenerRef) string {
		return fmt.Sprintf("%s %s/%s %s", r.Owner.Kind, r.Owner.Namespace, r.Owner.Name, r.Name)
	}
	out := map[string]string{}
	for ref, c := range topology.ListenerConflicts(snap, gw) {
		verdict := "may lose to"
		if c.Lost {
			verdict = "loses to"
		}
		out[name(ref)] = fmt.Sprintf("%s %s (%s, port %d)", verdict, name(c.With), c.Reason, c.Port)
	}
	return out
}

const (
	t1 = "2024-01-01T00:00:01Z"
	t2 = "2024-01-01T00:00:02Z"
)

// Which listener of a Gateway and its ListenerSets loses a conflict: the spec's precedence
// (the Gateway's own listeners, then ListenerSets oldest first, then by namespace/name) where
// it and Envoy Gateway agree, and a doubt (the listener stays) where they may not.
func TestListenerConflicts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	cases := map[string]struct {
		allowed   string
		listeners string
		sets      []set
		want      map[string]string
	}{
		"the Gateway's listener first, same port, protocol and hostname": {
			listeners: `[{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 80, hostname: a.example.com}]`}},
			want:      map[string]string{"ListenerSet infra/ls mine": "loses to Gateway infra/gw web (HostnameConflict, port 80)"},
		},
		"the same hostname on another port is no conflict": {
			listeners: `[{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 8080, hostname: a.example.com}]`}},
			want:      map[string]string{},
		},
		"no hostname on both is the same hostname": {
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{"ListenerSet infra/ls mine": "loses to Gateway infra/gw web (HostnameConflict, port 80)"},
		},
		"a hostname and none are distinct": {
			listeners: `[{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{},
		},
		"the older ListenerSet first, whatever the names": {
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets: []set{
				{namespace: "a", name: "a", created: t2, listeners: `[{name: x, protocol: HTTP, port: 8080, hostname: a.example.com}]`},
				{namespace: "b", name: "b", created: t1, listeners: `[{name: q, protocol: HTTP, port: 8080, hostname: a.example.com}]`},
			},
			want: map[string]string{"ListenerSet a/a x": "loses to ListenerSet b/b q (HostnameConflict, port 8080)"},
		},
		"created in the same second: by namespace/name": {
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets: []set{
				{namespace: "infra", name: "second", created: t1, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
				{namespace: "infra", name: "first", created: t1, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
			},
			want: map[string]string{"ListenerSet infra/second x": "loses to ListenerSet infra/first x (HostnameConflict, port 8080)"},
		},
		"created in the same second, where the spec's and Envoy Gateway's name orders differ": {
			// "team-x/ls" < "team/ls" ('-' before '/'), but namespace "team" < "team-x".
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets: []set{
				{namespace: "team", name: "ls", created: t1, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
				{namespace: "team-x", name: "ls", created: t1, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
			},
			want: map[string]string{
				"ListenerSet team/ls x":   "may lose to ListenerSet team-x/ls x (HostnameConflict, port 8080)",
				"ListenerSet team-x/ls x": "may lose to ListenerSet team/ls x (HostnameConflict, port 8080)",
			},
		},
		"each loser names the first listener, not another loser": {
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets: []set{
				{namespace: "infra", name: "one", created: t1, listeners: `[{name: x, protocol: HTTP, port: 80}]`},
				{namespace: "infra", name: "two", created: t2, listeners: `[{name: x, protocol: HTTP, port: 80}]`},
			},
			want: map[string]string{
				"ListenerSet infra/one x": "loses to Gateway infra/gw web (HostnameConflict, port 80)",
				"ListenerSet infra/two x": "loses to Gateway infra/gw web (HostnameConflict, port 80)",
			},
		},
		"an HTTPS listener first: valid only with a certificate the webhook does not read": {
			listeners: `[{name: web, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: cert}]}}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: other}]}}]`}},
			want:      map[string]string{"ListenerSet infra/ls mine": "may lose to Gateway infra/gw web (HostnameConflict, port 443)"},
		},
		"a listener first that lists a route kind it does not serve: Envoy Gateway lets the next win": {
			listeners: `[{name: web, protocol: HTTP, port: 80, allowedRoutes: {kinds: [{kind: TCPRoute}]}}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{"ListenerSet infra/ls mine": "may lose to Gateway infra/gw web (HostnameConflict, port 80)"},
		},
		"a listener first whose namespace selector is missing: Envoy Gateway lets the next win": {
			listeners: `[{name: web, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: Selector}}}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: mine, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{"ListenerSet infra/ls mine": "may lose to Gateway infra/gw web (HostnameConflict, port 80)"},
		},
		"a TCP listener on the port of an earlier HTTP one (conformance ListenerSetProtocolConflict)": {
			listeners: `[{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: raw, protocol: TCP, port: 80}]`}},
			want:      map[string]string{"ListenerSet infra/ls raw": "loses to Gateway infra/gw web (ProtocolConflict, port 80)"},
		},
		"an HTTP listener on the port of an earlier TCP one: accepted where TCP is not supported": {
			listeners: `[{name: raw, protocol: TCP, port: 80}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: web, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{"ListenerSet infra/ls web": "may lose to Gateway infra/gw raw (ProtocolConflict, port 80)"},
		},
		"an HTTP listener on the port of an earlier HTTPS one: the spec calls them distinct": {
			listeners: `[{name: tls, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: cert}]}}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: web, protocol: HTTP, port: 8443}]`}},
			want:      map[string]string{"ListenerSet infra/ls web": "may lose to Gateway infra/gw tls (ProtocolConflict, port 8443)"},
		},
		"the Gateway's own TCP and HTTP listeners on one port": {
			listeners: `[{name: web, protocol: HTTP, port: 80}, {name: raw, protocol: TCP, port: 80}]`,
			want: map[string]string{
				"Gateway infra/gw raw": "loses to Gateway infra/gw web (ProtocolConflict, port 80)",
				"Gateway infra/gw web": "may lose to Gateway infra/gw raw (ProtocolConflict, port 80)",
			},
		},
		"two TCP listeners on a port": {
			listeners: `[{name: raw, protocol: TCP, port: 9000}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: raw, protocol: TCP, port: 9000}]`}},
			want:      map[string]string{"ListenerSet infra/ls raw": "loses to Gateway infra/gw raw (ProtocolConflict, port 9000)"},
		},
		"UDP shares a port with anything": {
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets:      []set{{namespace: "infra", name: "ls", listeners: `[{name: dns, protocol: UDP, port: 80}]`}},
			want:      map[string]string{},
		},
		"a ListenerSet whose own listeners disagree on the port's protocol decides nothing for others": {
			listeners: `[{name: web, protocol: HTTP, port: 8080}]`,
			sets: []set{
				{namespace: "infra", name: "mixed", created: t1, listeners: `[{name: web, protocol: HTTP, port: 80}, {name: raw, protocol: TCP, port: 80}]`},
				{namespace: "infra", name: "later", created: t2, listeners: `[{name: web, protocol: HTTP, port: 80}]`},
			},
			want: map[string]string{
				"ListenerSet infra/mixed raw": "loses to ListenerSet infra/mixed web (ProtocolConflict, port 80)",
				"ListenerSet infra/mixed web": "may lose to ListenerSet infra/mixed raw (ProtocolConflict, port 80)",
				"ListenerSet infra/later web": "may lose to ListenerSet infra/mixed web (HostnameConflict, port 80)",
			},
		},
		"a ListenerSet its Gateway does not accept takes no part": {
			allowed:   "Same",
			listeners: `[{name: web, protocol: HTTP, port: 80}]`,
			sets:      []set{{namespace: "tenant", name: "ls", listeners: `[{name: web, protocol: HTTP, port: 80}]`}},
			want:      map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			allowed := tc.allowed
			if allowed == "" {
				allowed = "All"
			}
			snap := rulestest.World(t, table, conflictsWorld(allowed, tc.listeners, tc.sets...))
			assert.Equal(t, tc.want, conflictsOf(t, snap))
			assertOneByOneAgrees(t, snap)
		})
	}
}

// assertOneByOneAgrees checks that LostListener, which judges one listener by itself (as a
// walk up from a route does), says of every listener of infra/gw and its ListenerSets what
// judging them all at once (ListenerConflicts) says.
func assertOneByOneAgrees(t *testing.T, snap topology.Snapshot) {
	t.Helper()
	gw, ok := snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"})
	require.True(t, ok)
	all := topology.ListenerConflicts(snap, gw)
	for _, owner := range append([]*topology.Object{gw}, snap.ListenerSetsByGateway(gw.Key())...) {
		for _, l := range owner.Gateway.Listeners {
			key := owner.Key()
			key.Section = l.Name
			got, lost := topology.LostListener(snap, key)
			want := all[topology.ListenerRef{Owner: owner, Name: l.Name}]
			if !want.Lost {
				want = topology.ListenerConflict{}
			}
			assert.Equal(t, want.Lost, lost, "%s", key)
			assert.Equal(t, want, got, "%s", key)
		}
	}
}

// hostnameConflictWorld is conformance ListenerSetHostnameConflict
// (sigs.k8s.io/gateway-api/conformance v1.7.0 tests/listenerset-hostname-conflict.yaml) in
// short names, ListenerSets created in the suite's order, with a route on each parent and one
// on a losing listener by its sectionName.
const hostnameConflictWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: gateway-listener, protocol: HTTP, port: 80, hostname: gateway-listener.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: conflict-with-gateway, protocol: HTTP, port: 80, hostname: conflict-with-gateway.com, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: gw-1, namespace: infra, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: set-1, protocol: HTTP, port: 80, hostname: set-1.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: conflict-with-gateway, protocol: HTTP, port: 80, hostname: conflict-with-gateway.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: conflict-with-set, protocol: HTTP, port: 80, hostname: conflict-with-set.com, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: gw-2, namespace: infra, creationTimestamp: "2024-01-01T00:00:02Z"}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: conflict-with-gateway, protocol: HTTP, port: 80, hostname: conflict-with-gateway.com, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: set-1, namespace: infra, creationTimestamp: "2024-01-01T00:00:03Z"}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: set-2, protocol: HTTP, port: 80, hostname: set-2.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: conflict-with-set, protocol: HTTP, port: 80, hostname: conflict-with-set.com, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: set-2, namespace: infra, creationTimestamp: "2024-01-01T00:00:04Z"}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: conflict-with-set, protocol: HTTP, port: 80, hostname: conflict-with-set.com, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: everywhere, namespace: app}
spec:
  parentRefs:
  - {name: gw, namespace: infra}
  - {name: gw-1, namespace: infra, kind: ListenerSet}
  - {name: gw-2, namespace: infra, kind: ListenerSet}
  - {name: set-1, namespace: infra, kind: ListenerSet}
  - {name: set-2, namespace: infra, kind: ListenerSet}
  rules: [{name: main, backendRefs: [{name: b1, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-loser, namespace: app}
spec:
  parentRefs: [{name: gw-2, namespace: infra, kind: ListenerSet, sectionName: conflict-with-gateway}]
  rules: [{name: main, backendRefs: [{name: b1, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
spec:
  ports: [{name: https, port: 443}]`

// A listener that loses a conflict is on no path, whichever way the walk reaches it: down
// from the Gateway or its ListenerSet, up from a route or a backend, and for Direct kinds.
// Route status still counts it (a route MAY attach to a conflicted listener).
func TestLosingListenerIsOnNoPath(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, hostnameConflictWorld)
	color := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	btp := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
	ctp := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "ClientTrafficPolicy")
	key := func(kind, name, section string) policy.TargetKey {
		return policy.TargetKey{Group: kinds.GatewayGroup, Kind: kind, Namespace: "infra", Name: name, Section: section}
	}
	route := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "everywhere"}

	assert.Equal(t, map[string]string{
		"ListenerSet infra/gw-1 conflict-with-gateway": "loses to Gateway infra/gw conflict-with-gateway (HostnameConflict, port 80)",
		"ListenerSet infra/gw-2 conflict-with-gateway": "loses to Gateway infra/gw conflict-with-gateway (HostnameConflict, port 80)",
		"ListenerSet infra/set-1 conflict-with-set":    "loses to ListenerSet infra/gw-1 conflict-with-set (HostnameConflict, port 80)",
		"ListenerSet infra/set-2 conflict-with-set":    "loses to ListenerSet infra/gw-1 conflict-with-set (HostnameConflict, port 80)",
	}, conflictsOf(t, snap))
	assertOneByOneAgrees(t, snap)

	through := func(l string) string {
		return "Gateway infra/gw > " + l + " > HTTPRoute app/everywhere > Rule main > Service app/b1"
	}
	accepted := []string{
		through("Listener gateway-listener"),
		through("Listener conflict-with-gateway"),
		through("ListenerSet infra/gw-1 > Listener set-1"),
		through("ListenerSet infra/gw-1 > Listener conflict-with-set"),
		through("ListenerSet infra/set-1 > Listener set-2"),
	}
	assert.Equal(t, accepted, strs(topology.PathsThrough(snap, color, key("Gateway", "gw", ""))), "down from the Gateway")
	assert.Equal(t, accepted, strs(topology.PathsThrough(snap, color, route)), "up from the route")
	assert.Empty(t, strs(topology.PathsThrough(snap, btp, key("ListenerSet", "gw-2", ""))), "a ListenerSet whose only listener loses")
	assert.Empty(t, strs(topology.PathsThrough(snap, btp, key("ListenerSet", "gw-1", "conflict-with-gateway"))), "a losing listener")
	assert.Empty(t, strs(topology.PathsThrough(snap, btp, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "on-loser"})),
		"a route only on a losing listener")
	assert.Equal(t, []string{"Gateway infra/gw > ListenerSet infra/set-1 > Listener set-2"},
		strs(topology.PathsThrough(snap, ctp, key("ListenerSet", "set-1", ""))), "a Direct kind on a ListenerSet")
	assert.Empty(t, strs(topology.PathsThrough(snap, ctp, key("ListenerSet", "set-1", "conflict-with-set"))), "a Direct kind on a losing listener")

	lost, ok := topology.LostListener(snap, key("ListenerSet", "set-2", "conflict-with-set"))
	assert.True(t, ok)
	assert.Equal(t, "gw-1", lost.With.Owner.Name)
	_, ok = topology.LostListener(snap, key("ListenerSet", "gw-1", "conflict-with-set"))
	assert.False(t, ok, "the first of its hostname")

	onLoser, ok := snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "on-loser"})
	require.True(t, ok)
	attachments := topology.RouteAttachments(snap, onLoser)
	require.Len(t, attachments, 1)
	assert.Equal(t, []string{"conflict-with-gateway"}, attachments[0].Listeners, "status still reports the attachment")
}

// The order ListenerSets reach the snapshot in decides nothing: their creationTimestamp does.
func TestListenerConflictsDoNotDependOnTheOrderOfArrival(t *testing.T) {
	table := kinds.BuiltinKindTable()
	sets := []set{
		{namespace: "infra", name: "a", created: t2, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
		{namespace: "infra", name: "b", created: t1, listeners: `[{name: x, protocol: HTTP, port: 8080}]`},
	}
	want := map[string]string{"ListenerSet infra/a x": "loses to ListenerSet infra/b x (HostnameConflict, port 8080)"}
	for _, order := range [][]set{{sets[0], sets[1]}, {sets[1], sets[0]}} {
		snap := rulestest.World(t, table, conflictsWorld("All", `[{name: web, protocol: HTTP, port: 80}]`, order...))
		assert.Equal(t, want, conflictsOf(t, snap))
		assertOneByOneAgrees(t, snap)
	}
}
