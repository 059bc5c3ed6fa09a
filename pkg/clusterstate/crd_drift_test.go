package clusterstate

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// btpCRD is BackendTrafficPolicy's CRD at a release whose kind enum admits Service targets.
const btpCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}
spec:
  group: gateway.envoyproxy.io
  names: {kind: BackendTrafficPolicy}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              targetRefs:
                items:
                  properties:
                    group: {type: string}
                    kind: {type: string, enum: [Gateway, ListenerSet, HTTPRoute, GRPCRoute, TCPRoute, UDPRoute, TLSRoute, Service]}
                    name: {type: string}
              targetRef:
                properties:
                  group: {type: string}
                  kind: {type: string}
                  name: {type: string}
              targetSelectors: {items: {properties: {kind: {type: string}}}}
`

// A stored policy on a kind the installed CRD adds is judged by the derived row once the
// store uses it: the audit no longer finds it, and the drift is exported; back on the
// built-in row, it is found again and the series is gone.
func TestUseRowJudgesStoredPoliciesByTheDerivedRow(t *testing.T) {
	table := kinds.BuiltinKindTable()
	store := readyStore(table, rulestest.World(t, table, `
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: on-a-service, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]`))
	base := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
	denied := &field.Error{Type: field.ErrorTypeNotSupported, Field: "spec.targetRefs[0].kind", BadValue: policy.Echo("Service"), Origin: "InvalidTargetRef",
		Detail: `InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/ListenerSet", "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute", "gateway.networking.k8s.io/TCPRoute", "gateway.networking.k8s.io/UDPRoute", "gateway.networking.k8s.io/TLSRoute"`}

	findings, _ := store.Audit()
	require.Len(t, findings, 1)
	rulestest.Matcher.Test(t, field.ErrorList{denied}, findings[0].Denials)

	derived := crdfacts.Derive(base, crdfacts.FromObject(rulestest.Decode(t, btpCRD)))
	require.NoError(t, store.UseRow(derived))
	recordDrift(&derived)
	findings, _ = store.Audit()
	assert.Empty(t, findings, "judged by the installed CRD")
	assert.Equal(t, 1.0, testutil.ToFloat64(kindDrift.WithLabelValues("gateway.envoyproxy.io", "BackendTrafficPolicy", "targetKinds")))

	back := *derived.Installed.Base
	require.NoError(t, store.UseRow(back))
	recordDrift(&back)
	findings, _ = store.Audit()
	require.Len(t, findings, 1)
	rulestest.Matcher.Test(t, field.ErrorList{denied}, findings[0].Denials)
	assert.Equal(t, 0, testutil.CollectAndCount(kindDrift), "no drift, no series")
}
