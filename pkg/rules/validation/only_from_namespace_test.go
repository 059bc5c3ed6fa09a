package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// Istio applies a policy that targets a GatewayClass only from its root namespace
// (istio/api type/v1beta1/selector.proto PolicyTargetReference): elsewhere the policy is
// ignored, and the root namespace is Istio's configuration, so the webhook warns.
func TestWarnOnlyFromNamespace(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.Topology, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}`)
	policy := func(kind, namespace, refs string) string {
		return `
apiVersion: security.istio.io/v1
kind: ` + kind + `
metadata: {name: p, namespace: ` + namespace + `}
spec:
  targetRefs: ` + refs
	}
	const gatewayClass = `[{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio}]`
	cases := map[string]struct {
		policy string
		want   []string
	}{
		"a GatewayClass from another namespace than the root": {
			policy: policy("AuthorizationPolicy", "app", gatewayClass),
			want:   []string{`NotFromThisNamespace: spec.targetRefs[0]: AuthorizationPolicy takes effect on a GatewayClass only from namespace "istio-system" (unless MeshConfig rootNamespace names another); from namespace "app" it is ignored`},
		},
		"a GatewayClass from the root namespace": {
			policy: policy("RequestAuthentication", "istio-system", gatewayClass),
		},
		"a Gateway from any namespace": {
			policy: policy("AuthorizationPolicy", "infra", `[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.WarnMissingTargets(rulestest.PolicyOf(t, table, tc.policy), snap)
			assert.Equal(t, tc.want, got)
		})
	}
}
