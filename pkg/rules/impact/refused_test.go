package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// A state can hold a policy the implementation refuses whole (admitted under Warn, or read
// from manifests): Envoy Gateway refuses a ClientTrafficPolicy on one of two plain-HTTP
// listeners sharing a port and applies it nowhere, while it still keeps the Gateway-wide
// policy off that listener (clienttrafficpolicy.go, v1.9.1; the oracle's finding).
func TestRefusedPolicyIsOverridden(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http-a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: http-b, protocol: HTTP, port: 80, hostname: b.example.com}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: wide, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: {http: {idleTimeout: 5s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: on-a, namespace: infra, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http-a}]
  timeout: {http: {idleTimeout: 9s}}`)
	assert.Equal(t, map[string]string{"infra/on-a": StatusOverridden, "infra/wide": StatusPartiallyEnforced}, statuses(snap, table))
}
