package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// Deleting a ReferenceGrant (one the state holds) breaks the policies whose references need it: not one whose
// implementation follows the reference without a grant (kgateway's extAuth GatewayExtension
// outside STRICT mode).
func TestGrantDependentsNeedTheGrant(t *testing.T) {
	const policies = `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: header-secret, namespace: app-ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  headerModifiers:
    request: {set: [{name: x-key, secretRef: {name: keys, namespace: shared}}]}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: ext-auth, namespace: app-ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]
  extAuth: {extensionRef: {name: ext, namespace: shared}}`
	const grant = `
metadata: {name: g, namespace: shared}
spec:
  from: [{group: gateway.kgateway.dev, kind: TrafficPolicy, namespace: app-ns}]
  to: [{group: "", kind: Secret}, {group: gateway.kgateway.dev, kind: GatewayExtension}]`
	var g gatewayv1.ReferenceGrant
	require.NoError(t, yaml.Unmarshal([]byte(grant), &g))

	for mode, want := range map[string][]string{
		"PERMISSIVE": {"app-ns/header-secret"},
		"STRICT":     {"app-ns/ext-auth", "app-ns/header-secret"},
		"OFF":        nil,
	} {
		t.Run(mode, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			var entry kinds.Implementation
			for _, impl := range table.Implementations() {
				if impl.Name == "kgateway" {
					entry = impl
				}
			}
			grants := *entry.ReferenceGrants
			grants.Mode = mode
			entry.ReferenceGrants = &grants
			require.NoError(t, table.PutImplementations([]kinds.Implementation{entry}, "test"))
			snap := rulestest.World(t, table, policies, "apiVersion: gateway.networking.k8s.io/v1\nkind: ReferenceGrant"+grant)
			var got []string
			for _, p := range GrantDependents(snap, table, &g) {
				got = append(got, p.Ref())
			}
			assert.Equal(t, want, got)
		})
	}
}
