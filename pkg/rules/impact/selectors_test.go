package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// selectedRoutes re-expresses Envoy Gateway's
// internal/gatewayapi/testdata/backendtrafficpolicy-multiple-targets-targetselector.in.yaml
// (commit d32f2829): routes labelled app=web in the policy's namespace and in another; the
// selector, without namespaces, reaches only its own. A third route here carries the label
// too, and an older policy names it.
const selectedRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: eg}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: default, labels: {app: web}}
spec: {parentRefs: [{name: gw, namespace: eg}], rules: [{backendRefs: [{name: s1, port: 8080}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: eg, labels: {app: web}}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: s2, port: 8080}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: claimed, namespace: eg, labels: {app: web}}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: s3, port: 8080}]}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: by-ref, namespace: eg, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: claimed}]
  useClientProtocol: true
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: by-label, namespace: eg, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetSelectors: [{kind: HTTPRoute, matchLabels: {app: web}}]
  useClientProtocol: true
`

// The impact of a selecting policy counts the objects its selector reaches now: on the
// route an older policy names, Envoy Gateway applies the older one.
func TestImpactThroughSelectors(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, selectedRoutes)
	gk := rulestest.SchemaGK("gateway.envoyproxy.io", "BackendTrafficPolicy")
	byLabel, ok := snap.GetPolicy(gk, "eg", "by-label")
	require.True(t, ok)
	byRef, ok := snap.GetPolicy(gk, "eg", "by-ref")
	require.True(t, ok)

	im := Of(snap, byLabel, nil)
	assert.Equal(t, "Atomic defaults on 2 targets: enforced on 1 of 2 paths, overridden on 1 by eg/by-ref", im.Summary(byLabel))
	im.selected = nil
	assert.Equal(t, Impact{Status: StatusPartiallyEnforced, Contexts: 2, Enforced: 1, Overridden: 1,
		Overrides: []string{}, OverriddenBy: []string{"eg/by-ref"}, ObservedAt: "2024-01-01T00:00:00Z"}, im)

	assert.Equal(t, Impact{Status: StatusEnforced, Contexts: 1, Enforced: 1,
		Overrides: []string{"eg/by-label"}, OverriddenBy: []string{}, ObservedAt: "2025-01-01T00:00:00Z"}, Of(snap, byRef, nil))
}

// The audit judges selections as they stand: the selecting policy, younger, is the
// finding, though no policy write revealed the conflict.
func TestAuditFindsConflictsThroughSelectors(t *testing.T) {
	table := kinds.BuiltinKindTable()
	findings, audited := Audit(rulestest.World(t, table, selectedRoutes), nil)
	assert.Equal(t, 2, audited)
	require.Len(t, findings, 1)
	assert.Equal(t, "eg/by-label", findings[0].Policy.Ref())
	assert.Equal(t, "spec.targetSelectors[0]", findings[0].Denials[0].Field)
}
