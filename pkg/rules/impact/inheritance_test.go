package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// agentgateway's strategy.inheritance: Override locks a Gateway's traffic setting against a
// route's; Default (or unset) lets the route's win (agentgateway v1.4.1, the dataplane's
// route_policies and its tests). The row says so with stanzas.classBy.
func TestAgentgatewayInheritanceOverride(t *testing.T) {
	table := kinds.BuiltinKindTable()
	policy := func(name, target, inheritance, timeout string) string {
		strategy := ""
		if inheritance != "" {
			strategy = "\n  strategy: {inheritance: " + inheritance + "}"
		}
		return `
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [` + target + `]` + strategy + `
  traffic: {timeouts: {request: ` + timeout + `}}`
	}
	const world = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {gatewayClassName: agentgateway, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: app}
spec: {ports: [{port: 80}]}`
	const gw = `{group: gateway.networking.k8s.io, kind: Gateway, name: gw}`
	const route = `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}`
	for _, tc := range []struct {
		inheritance, winner string
	}{
		{"", "app/on-route"},
		{"Default", "app/on-route"},
		{"Override", "app/on-gateway"},
	} {
		t.Run("inheritance "+tc.inheritance, func(t *testing.T) {
			snap := rulestest.World(t, table, world,
				policy("on-gateway", gw, tc.inheritance, "5s"), policy("on-route", route, "", "9s"))
			ex := Explain(snap, table, nil)
			require.NotEmpty(t, ex.Paths)
			for _, path := range ex.Paths {
				assert.Equal(t, tc.winner, path.Sources["traffic.timeouts"], "%v", path.Path)
			}
		})
	}
}
