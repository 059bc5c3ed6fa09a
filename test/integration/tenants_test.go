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

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// TestNothingOfAnotherTenantLeaks plants a recognisable value and name in one tenant's
// policy on a shared Gateway, then writes in another tenant's namespace through the API
// server and the webhook's HTTPS door: the denial, the warnings and the impact annotations
// the second tenant gets say which setting collides and where the other policy lives, never
// its name or its value.
func TestNothingOfAnotherTenantLeaks(t *testing.T) {
	const secretName, secretValue = "payments-secret-policy", "payments-internal-token-abc123"
	cl, w := newClient(t)
	ctx := context.Background()
	for _, ns := range []string{"leak-infra", "leak-payments", "leak-app"} {
		namespace(t, cl, ns)
	}
	for _, doc := range []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: leak-infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]`, `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: tenants, namespace: leak-infra}
spec:
  from:
  - {group: policies.controller.io, kind: ColorPolicy, namespace: leak-payments}
  - {group: policies.controller.io, kind: ColorPolicy, namespace: leak-app}
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: leak-app}
spec:
  parentRefs: [{name: gw, namespace: leak-infra}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`} {
		require.NoError(t, cl.Create(ctx, object(t, doc)))
	}
	planted := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: `+secretName+`, namespace: leak-payments}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: leak-infra}]
  overrides: {color: `+secretValue+`}`)
	require.Eventually(t, func() bool { return cl.Create(ctx, planted.DeepCopy()) == nil }, 10*time.Second, 50*time.Millisecond,
		"admitted once the informer has seen the grant")
	w.Take()

	// The other tenant's override on the same Gateway: a collision, described without the
	// other policy's name or value.
	mine := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: mine, namespace: leak-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: leak-infra}]
  overrides: {color: blue}`)
	var err error
	require.Eventually(t, func() bool {
		err = cl.Create(ctx, mine.DeepCopy())
		return err != nil && strings.Contains(err.Error(), "Conflicted")
	}, 10*time.Second, 50*time.Millisecond, "the informer has seen the planted policy")
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ColorPolicy.policies.controller.io "mine" is invalid: spec.overrides: Forbidden: Conflicted: a ColorPolicy in namespace "leak-payments" on Gateway leak-infra/gw also sets atomic overrides; across namespaces two policies that set the same setting at one level conflict whatever their values (no verdict depends on what another namespace's policy says), so use different settings or attach at another level`, denial(err))

	// A route's defaults that the planted override beats: admitted, and annotated with who
	// overrides it only as far as the tenant may know.
	route := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: leak-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: green}`)
	require.NoError(t, cl.Create(ctx, route))
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(route.GroupVersionKind())
	require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(route), stored))
	annotations := stored.GetAnnotations()
	assert.Equal(t, `Atomic defaults on HTTPRoute leak-app/store: enforced on 0 of 1 path, overridden on 1 by a ColorPolicy in namespace "leak-payments" (predicted at admission)`,
		annotations[impact.AnnotationImpactSummary])
	var im impact.Impact
	require.NoError(t, json.Unmarshal([]byte(annotations[impact.AnnotationImpact]), &im))
	assert.Equal(t, []string{`a ColorPolicy in namespace "leak-payments"`}, im.OverriddenBy)

	everything := denial(err) + strings.Join(w.Take(), "\n") + annotations[impact.AnnotationImpact] + annotations[impact.AnnotationImpactSummary]
	for _, secret := range []string{secretName, secretValue} {
		assert.NotContains(t, everything, secret)
	}
}
