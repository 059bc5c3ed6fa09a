package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// lostListenerWorld is a Gateway in infra whose listener "web" a ListenerSet in app repeats
// (its "mine": same port, protocol and hostname, so it is not accepted), with a listener of
// its own ("ok"), a route on the ListenerSet, and an older BackendTrafficPolicy on the
// Gateway.
const lostListenerWorld = `
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: web, protocol: HTTP, port: 80, hostname: a.example.com, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: app, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners:
  - {name: mine, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: ok, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: ls, kind: ListenerSet}]
  rules: [{name: main, backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: gw-wide, namespace: infra, creationTimestamp: "2024-01-01T00:00:02Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: {http: {requestTimeout: 5s}}`

// onListenerSet is an Envoy Gateway policy in app on the ListenerSet app/ls, or one of its
// listeners.
func onListenerSet(kind, name, created, section string) string {
	spec := "  timeout: {http: {requestTimeout: 9s}}"
	if kind == "ClientTrafficPolicy" {
		spec = "  timeout: {http: {idleTimeout: 9s}}"
	}
	ref := "{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls"
	if section != "" {
		ref += ", sectionName: " + section
	}
	return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ` + kind + `
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + created + `"}
spec:
  targetRefs: [` + ref + `}]
` + spec
}

// A policy on a listener that loses a listener conflict is admitted with a warning that says
// which listener wins; it reaches no path, so it is enforced nowhere and overrides nothing
// (the Gateway's policy is not Overridden by it). Two policies there still conflict: the
// implementation judges them by the section's name alone.
func TestPolicyOnALosingListener(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const lost = `ListenerConflicted: spec.targetRefs[0].sectionName: listener "mine" of ListenerSet app/ls is not accepted (HostnameConflict): ` +
		`it has the port (80), protocol (HTTP) and hostname ("a.example.com") of a listener of a Gateway in namespace "infra"; ` +
		`Gateway API accepts the first of the two: the Gateway's own listeners, then ListenerSets' oldest first, then by namespace/name; ` +
		`the policy takes effect through it once the conflict is gone`
	cases := map[string]struct {
		stored, policy string
		denials        field.ErrorList
		warnings       []string
		// impact of the policy, and of the Gateway's policy once it is stored
		status, gatewayStatus string
		contexts              int
		overrides             []string
	}{
		"on the losing listener: warned, enforced nowhere": {
			policy:        onListenerSet("BackendTrafficPolicy", "p", "2024-01-01T00:00:03Z", "mine"),
			warnings:      []string{lost},
			status:        impact.StatusNoTargets,
			gatewayStatus: impact.StatusEnforced,
			overrides:     []string{},
		},
		"on an accepted listener of the same ListenerSet: overrides the Gateway's there": {
			policy:        onListenerSet("BackendTrafficPolicy", "p", "2024-01-01T00:00:03Z", "ok"),
			status:        impact.StatusEnforced,
			gatewayStatus: impact.StatusOverridden,
			contexts:      1,
			overrides:     []string{"infra/gw-wide"},
		},
		"on the whole ListenerSet: only through its accepted listener": {
			policy:        onListenerSet("BackendTrafficPolicy", "p", "2024-01-01T00:00:03Z", ""),
			status:        impact.StatusEnforced,
			gatewayStatus: impact.StatusOverridden,
			contexts:      1,
			overrides:     []string{"infra/gw-wide"},
		},
		"a second policy on the losing listener: still Conflicted (Envoy Gateway resolves it by the section's name)": {
			stored: onListenerSet("BackendTrafficPolicy", "first", "2024-01-01T00:00:03Z", "mine"),
			policy: onListenerSet("BackendTrafficPolicy", "p", "2024-01-01T00:00:04Z", "mine"),
			denials: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"ListenerSet app/ls section mine already has BackendTrafficPolicy app/first; BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
			warnings:      []string{lost},
			status:        impact.StatusNoTargets,
			gatewayStatus: impact.StatusEnforced,
			overrides:     []string{},
		},
		"a ClientTrafficPolicy on the losing listener: it shares port 80 with nothing served": {
			policy:   onListenerSet("ClientTrafficPolicy", "p", "2024-01-01T00:00:03Z", "mine"),
			warnings: []string{lost},
			status:   impact.StatusNoTargets,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, lostListenerWorld, tc.stored)
			v := rulestest.Judge(t, table, snap, tc.policy)
			rulestest.Matcher.Test(t, tc.denials, v.Denials)
			assert.Equal(t, tc.warnings, v.Warnings)

			p := rulestest.PolicyOf(t, table, tc.policy)
			im := impact.Of(topology.WithPolicy(snap, p), p, nil)
			assert.Equal(t, tc.status, im.Status)
			assert.Equal(t, tc.contexts, im.Contexts)
			if tc.gatewayStatus == "" {
				return
			}
			assert.Equal(t, tc.overrides, im.Overrides)
			snap.PutPolicy(p)
			gw, ok := snap.GetPolicy(p.GroupKind(), "infra", "gw-wide")
			require.True(t, ok)
			assert.Equal(t, tc.gatewayStatus, impact.Of(snap, gw, nil).Status)
		})
	}
}
