package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// deletionWorld: Gateways infra/gw and infra/gw2 open to every namespace (gw also to every
// namespace's ListenerSets); routes app/store (on gw), app/cart (on gw2) and app/both (on
// both); a ListenerSet app/ls of gw with a route app/ls-route; a Service app/store. Policies:
// a Gateway default infra/gw-defaults on gw, infra/both-gws on gw and gw2, app/store-blue on
// app/store, app/multi on app/store and app/cart, app/both-green on app/both, a
// ClientTrafficPolicy app/ls-timeouts on the ListenerSet, a BackendTrafficPolicy
// app/by-label selecting the routes labelled tier=store (app/store alone).
const deletionWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: unused, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: app}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: extra, protocol: HTTP, port: 8080, hostname: extra.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: app, labels: {tier: store}}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: store, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cart, namespace: app}
spec:
  parentRefs: [{name: gw2, namespace: infra}]
  rules: [{backendRefs: [{name: cart, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}, {name: gw2, namespace: infra}]
  rules: [{backendRefs: [{name: store, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ls-route, namespace: app}
spec:
  parentRefs: [{kind: ListenerSet, name: ls}]
  rules: [{backendRefs: [{name: store, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: store, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-defaults, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: red}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: both-gws, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}, {group: gateway.networking.k8s.io, kind: Gateway, name: gw2}]
  defaults: {shade: dark}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: store-blue, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  color: blue
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: multi, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: cart}]
  defaults: {pattern: dots}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: both-green, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: both}]
  color: green
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: ls-timeouts, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}]
  timeout: {http: {requestReceivedTimeout: 5s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: by-label, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {tier: store}}]
  timeout: {tcp: {connectTimeout: 3s}}
`

func TestTargetDeletionWarnings(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, deletionWorld)
	gateway := func(ns, name string) policy.TargetKey {
		return policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: ns, Name: name}
	}
	route := func(name string) policy.TargetKey {
		return policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: name}
	}
	reveal := &validation.Messages{RevealOtherNamespaces: true}
	cases := map[string]struct {
		target       policy.TargetKey
		msgs         *validation.Messages
		want         []string
		wantRefusal  string
		wantPolicies int
	}{
		// gw-defaults had gw alone; both-gws keeps gw2. Below gw: store-blue's route and the
		// ListenerSet's policy attach nowhere else; by-label's route neither (a selection);
		// multi keeps cart on gw2 and both-green keeps both on gw2. The infra team reads
		// app's policies by kind and namespace only.
		"a Gateway, as its namespace reads it": {
			target: gateway("infra", "gw"),
			want: []string{
				`DeleteImpact: deleting Gateway infra/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy infra/gw-defaults`,
				`DeleteImpact: deleting Gateway infra/gw leaves 3 policies whose targets then attach to no Gateway, so they apply nowhere: ` +
					`a BackendTrafficPolicy in namespace "app", a ClientTrafficPolicy in namespace "app", a ColorPolicy in namespace "app"`,
			},
			wantRefusal: `TargetInUse: deleting Gateway infra/gw is refused (targetDeletions mode Deny in namespace "infra"): ` +
				`it leaves 1 policy without a target, so it applies nowhere: ColorPolicy infra/gw-defaults; ` +
				`it leaves 3 policies whose targets then attach to no Gateway, so they apply nowhere: ` +
				`a BackendTrafficPolicy in namespace "app", a ClientTrafficPolicy in namespace "app", a ColorPolicy in namespace "app"; ` +
				`retarget or delete those policies first, or ask your platform team to lift the mode`,
			wantPolicies: 4,
		},
		"a Gateway, with names revealed": {
			target: gateway("infra", "gw"),
			msgs:   reveal,
			want: []string{
				`DeleteImpact: deleting Gateway infra/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy infra/gw-defaults`,
				`DeleteImpact: deleting Gateway infra/gw leaves 3 policies whose targets then attach to no Gateway, so they apply nowhere: ` +
					`BackendTrafficPolicy app/by-label, ClientTrafficPolicy app/ls-timeouts, ColorPolicy app/store-blue`,
			},
			wantPolicies: 4,
		},
		// A route policy with one route goes with it, the selection too; multi keeps cart,
		// and the Gateway's default keeps the Gateway: losing a path is not losing a target.
		"a route": {
			target: route("store"),
			want: []string{
				`DeleteImpact: deleting HTTPRoute app/store leaves 2 policies without a target, so they apply nowhere: BackendTrafficPolicy app/by-label, ColorPolicy app/store-blue`,
			},
			wantPolicies: 2,
		},
		"a route attached elsewhere too": {
			target: route("both"),
			want: []string{
				`DeleteImpact: deleting HTTPRoute app/both leaves 1 policy without a target, so it applies nowhere: ColorPolicy app/both-green`,
			},
			wantPolicies: 1,
		},
		"a ListenerSet": {
			target: policy.TargetKey{Group: kinds.GatewayGroup, Kind: "ListenerSet", Namespace: "app", Name: "ls"},
			want: []string{
				`DeleteImpact: deleting ListenerSet app/ls leaves 1 policy without a target, so it applies nowhere: ClientTrafficPolicy app/ls-timeouts`,
			},
			wantPolicies: 1,
		},
		"a Gateway nothing attaches to":        {target: gateway("infra", "unused")},
		"an object the snapshot does not hold": {target: gateway("infra", "gone")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := TargetDeletionOf(snap, table, tc.target)
			assert.Equal(t, tc.want, d.Warnings(tc.msgs))
			assert.Equal(t, len(tc.want) == 0, d.Empty())
			assert.Equal(t, tc.wantPolicies, d.Policies())
			if tc.wantRefusal != "" {
				assert.Equal(t, tc.wantRefusal, d.Refusal(tc.msgs))
			}
		})
	}
}

// Deleting a Service leaves the routes that send to it: on their paths the policies attached
// to the Service no longer apply, and what the levels above set applies instead: quoted
// where the deleter may read the policy that sets it, only counted otherwise (a setting's
// path is that policy's content too).
func TestTargetDeletionOfAServiceSaysWhatAppliesInstead(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: agw, namespace: infra}
spec: {gatewayClassName: agentgateway, listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: app}
spec:
  parentRefs: [{name: agw, namespace: infra}]
  rules: [{name: read, backendRefs: [{name: api, port: 80}]}, {name: write, backendRefs: [{name: api, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: gw-traffic, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}]
  traffic: {timeouts: {request: 5s}}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: route-backend, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  backend: {tcp: {keepalive: {time: 30s}}}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: api-traffic, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  traffic: {timeouts: {request: 60s}}
  backend: {tcp: {keepalive: {time: 90s}}}`)
	d := TargetDeletionOf(snap, table, policy.TargetKey{Kind: "Service", Namespace: "app", Name: "api"})
	assert.Equal(t, []string{
		`DeleteImpact: deleting Service app/api leaves 1 policy without a target, so it applies nowhere: AgentgatewayPolicy app/api-traffic`,
		`DeleteImpact: deleting Service app/api changes the effective AgentgatewayPolicy on 2 paths to it: AgentgatewayPolicy app/api-traffic no longer applies there; ` +
			`what applies instead: backend.tcp: {"keepalive":{"time":"30s"}} from AgentgatewayPolicy app/route-backend, 1 setting from an AgentgatewayPolicy in namespace "infra"`,
	}, d.Warnings(nil))
	assert.Equal(t, 1, d.Policies())

	// Someone who may read every namespace's policies reads the values too.
	assert.Equal(t, `DeleteImpact: deleting Service app/api changes the effective AgentgatewayPolicy on 2 paths to it: AgentgatewayPolicy app/api-traffic no longer applies there; `+
		`what applies instead: backend.tcp: {"keepalive":{"time":"30s"}} from AgentgatewayPolicy app/route-backend, traffic.timeouts: {"request":"5s"} from AgentgatewayPolicy infra/gw-traffic`,
		d.Warnings(&validation.Messages{RevealOtherNamespaces: true})[1])
}

// What a deletion reports never turns on the value another namespace's policy sets: two
// states that differ only there give the same answer, word for word.
func TestTargetDeletionDoesNotReadOtherNamespacesValues(t *testing.T) {
	table := kinds.BuiltinKindTable()
	world := func(timeout string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: agw, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: app}
spec:
  parentRefs: [{name: agw, namespace: infra}]
  rules: [{backendRefs: [{name: api, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: secret-timeouts, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}]
  traffic: {timeouts: {request: ` + timeout + `}}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: api, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  traffic: {timeouts: {request: 60s}}`
	}
	target := policy.TargetKey{Kind: "Service", Namespace: "app", Name: "api"}
	var answers [][]string
	for _, timeout := range []string{"60s", "137s", "1s"} {
		answers = append(answers, TargetDeletionOf(rulestest.World(t, table, world(timeout)), table, target).Warnings(nil))
	}
	assert.Equal(t, []string{
		`DeleteImpact: deleting Service app/api leaves 1 policy without a target, so it applies nowhere: AgentgatewayPolicy app/api`,
		`DeleteImpact: deleting Service app/api changes the effective AgentgatewayPolicy on 1 path to it: AgentgatewayPolicy app/api no longer applies there; ` +
			`what applies instead: 1 setting from an AgentgatewayPolicy in namespace "infra"`,
	}, answers[0])
	assert.Equal(t, answers[0], answers[1])
	assert.Equal(t, answers[0], answers[2])
	for _, w := range answers[0] {
		assert.NotContains(t, w, "secret-timeouts")
		assert.NotContains(t, w, "137")
	}
}
