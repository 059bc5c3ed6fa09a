package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// nextReleaseSchema is BackendTrafficPolicy's spec as a later Envoy Gateway release might
// have it: its target references' kind enum admits Service, which the built-in row (read at
// envoyproxy/gateway v1.9.1) does not; mergeType and admissionControl keep v1.9.1's rules; at most 16 targets,
// where v1.9.1 sets no limit (stricter: the row stays, the API server refuses first).
const nextReleaseSchema = `
type: object
properties:
  spec:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    x-kubernetes-validations:
    - rule: "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute', 'GRPCRoute', 'UDPRoute', 'TCPRoute', 'TLSRoute'])"
    - rule: "!has(self.admissionControl) || ((!has(self.targetRef) || self.targetRef.kind in ['Gateway', 'ListenerSet', 'HTTPRoute', 'GRPCRoute']) && (!has(self.targetRefs) || self.targetRefs.all(ref, ref.kind in ['Gateway', 'ListenerSet', 'HTTPRoute', 'GRPCRoute'])) && (!has(self.targetSelectors) || self.targetSelectors.all(sel, sel.kind in ['Gateway', 'ListenerSet', 'HTTPRoute', 'GRPCRoute'])))"
    properties:
      mergeType: {type: string}
      admissionControl: {type: object, x-kubernetes-preserve-unknown-fields: true}
      targetRef: &ref
        type: object
        properties:
          group: {type: string, maxLength: 253, enum: [gateway.networking.k8s.io, ""]}
          kind: {type: string, maxLength: 63, enum: [Gateway, ListenerSet, HTTPRoute, GRPCRoute, TCPRoute, UDPRoute, TLSRoute, Service]}
          name: {type: string, maxLength: 253}
          sectionName: {type: string, maxLength: 253}
      targetRefs:
        type: array
        maxItems: 16
        items: *ref
      targetSelectors:
        type: array
        maxItems: 16
        items: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {kind: {type: string}}}
  status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// TestInstalledCRDIsTheRuntimeTruth: a BackendTrafficPolicy on a Service is denied while the
// cluster's CRD refuses it as the built-in row does; once the CRD (a later release) admits
// Service targets, the webhook, watching CRDs, judges by it: the same policy is admitted
// with a CRDDrift warning, the drift is exported as a metric, and `kinds --cluster` lists it
// with the release the CRD says it comes from. Put back, the CRD is judged by the row again.
func TestInstalledCRDIsTheRuntimeTruth(t *testing.T) {
	ctx := context.Background()
	cl, w := newClient(t)
	namespace(t, cl, "drift")
	createService(t, cl, "drift", "b1")
	const policy = `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: on-a-service, namespace: drift}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]`
	const denied = `admission webhook "validate.policyattachment.io" denied the request: BackendTrafficPolicy.gateway.envoyproxy.io "on-a-service" is invalid: spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/ListenerSet", "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute", "gateway.networking.k8s.io/TCPRoute", "gateway.networking.k8s.io/UDPRoute", "gateway.networking.k8s.io/TLSRoute"`
	require.Equal(t, denied, denial(cl.Create(ctx, object(t, policy), client.DryRunAll)), "the built-in row denies a Service target")

	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "backendtrafficpolicies.gateway.envoyproxy.io"}, crd))
	original := crd.DeepCopy()
	t.Cleanup(func() {
		restored := &unstructured.Unstructured{}
		restored.SetGroupVersionKind(crd.GroupVersionKind())
		require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: crd.GetName()}, restored))
		restored.Object["spec"] = original.Object["spec"]
		restored.SetLabels(original.GetLabels())
		require.NoError(t, cl.Update(ctx, restored))
		require.Eventually(t, func() bool { return denial(cl.Create(ctx, object(t, policy), client.DryRunAll)) == denied },
			time.Minute, 100*time.Millisecond, "back to the built-in row once the CRD no longer admits Service")
	})

	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := versions[0].(map[string]any)
	version["schema"] = map[string]any{"openAPIV3Schema": object(t, nextReleaseSchema).Object}
	require.NoError(t, unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"))
	crd.SetLabels(map[string]string{"helm.sh/chart": "gateway-crds-helm-v1.10.0"})
	require.NoError(t, cl.Update(ctx, crd))

	// The webhook sees the CRD change through its watch and derives the row again.
	var got string
	require.Eventually(t, func() bool {
		w.Take()
		got = denial(cl.Create(ctx, object(t, policy), client.DryRunAll))
		return got == "<allowed>"
	}, time.Minute, 100*time.Millisecond, "the installed CRD admits a Service target: %s", got)
	w.Take() // the dry run's
	require.NoError(t, cl.Create(ctx, object(t, policy)))
	assert.Equal(t, []string{
		"CRDDrift: spec.targetRefs[0].kind: the installed CRD backendtrafficpolicies.gateway.envoyproxy.io admits target kind Service, which the webhook's row of BackendTrafficPolicy (read at envoyproxy/gateway v1.9.1) does not; judged by the installed CRD",
	}, w.Take())

	metrics, err := cluster.ScrapeMetrics()
	require.NoError(t, err)
	assert.Contains(t, metrics, `policyattachment_kind_drift{fact="targetKinds",group="gateway.envoyproxy.io",kind="BackendTrafficPolicy"} 1`+"\n")

	run := webhookCLI(t)
	code, out, errOut := run("kinds", "--cluster", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var drift []kinds.KindDrift
	require.NoError(t, json.Unmarshal([]byte(out), &drift))
	var btp *kinds.KindDrift
	for i := range drift {
		if drift[i].Kind == "gateway.envoyproxy.io/BackendTrafficPolicy" {
			btp = &drift[i]
		}
	}
	require.NotNil(t, btp, "kinds --cluster lists BackendTrafficPolicy: %s", out)
	assert.Equal(t, kinds.KindDrift{
		Kind: "gateway.envoyproxy.io/BackendTrafficPolicy", ReadAt: "envoyproxy/gateway v1.9.1",
		CRD: "backendtrafficpolicies.gateway.envoyproxy.io", Release: "helm.sh/chart=gateway-crds-helm-v1.10.0",
		Drift: []kinds.CRDDrift{
			{Fact: "maxTargetRefs", Row: "no limit", CRD: "at most 16"},
			{Fact: "targetKinds", Item: "Service", Row: "does not admit it", CRD: "admits it", Widened: true},
		},
	}, *btp)

	code, out, errOut = run("kinds", "--cluster")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "gateway.envoyproxy.io/BackendTrafficPolicy: row read at envoyproxy/gateway v1.9.1; installed CRD backendtrafficpolicies.gateway.envoyproxy.io (helm.sh/chart=gateway-crds-helm-v1.10.0)\n"+
		"    maxTargetRefs: row no limit; CRD at most 16\n"+
		"    targetKinds Service: row does not admit it; CRD admits it (judged by the CRD: CRDDrift warning)\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Regexp(t, `^\d+ built-in kinds have a CRD installed: 1 differences the webhook judges by the CRD$`, lines[len(lines)-1])

	// The audit judges the stored policy by the CRD too, and says so.
	code, out, errOut = run("audit", "-n", "drift")
	require.Equal(t, 0, code, errOut)
	lines = strings.Split(out, "\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, []string{
		"CRD DRIFT gateway.envoyproxy.io/BackendTrafficPolicy: row read at envoyproxy/gateway v1.9.1; installed CRD backendtrafficpolicies.gateway.envoyproxy.io (helm.sh/chart=gateway-crds-helm-v1.10.0)",
		"    targetKinds Service: row does not admit it; CRD admits it (judged by the CRD: CRDDrift warning)",
	}, lines[:2])
	// Every namespace's policies are audited (other tests' too); -n reports this one's.
	assert.Regexp(t, `^\d+ policies audited: 0 would be denied today$`, lines[2])
}
