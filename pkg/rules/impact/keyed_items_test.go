package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// Two ListenerPolicies writing different fields of one perPort item each write its key
// (port: 8080); the key names the item and overrides nothing, so both are Enforced
// (kgateway mergePerPort applies both). An item of its key alone is a setting: a second
// policy's copy of it does override (Envoy Gateway's compression by type, the corpus's
// btp-compression-strategic-merge).
func TestKeyedItemKeysAreNoSettings(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec: {gatewayClassName: kgw, listeners: [{name: http, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: ListenerPolicy
metadata: {name: old, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  perPort: [{port: 8080, listener: {perConnectionBufferLimitBytes: 1024}}]
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: ListenerPolicy
metadata: {name: new, namespace: infra, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  perPort: [{port: 8080, listener: {httpSettings: {useRemoteAddress: true}}}]`)
	assert.Equal(t, map[string]string{"infra/old": StatusEnforced, "infra/new": StatusEnforced}, statuses(snap, table))
}

// statuses is explain's status of every policy in snap, by namespace/name.
func statuses(snap topology.State, table *kinds.KindTable) map[string]string {
	got := map[string]string{}
	for _, p := range Explain(snap, table, nil).Policies {
		got[p.Namespace+"/"+p.Name] = p.Status
	}
	return got
}
