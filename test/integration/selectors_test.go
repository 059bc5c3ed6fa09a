package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A BackendTrafficPolicy that selects routes by label holds them against later policies,
// and a label written to a route later moves it under the selector: the webhook's store
// follows the route's watch event, so the next policy on that route is refused.
func TestSelectorTargetsThroughTheAPIServer(t *testing.T) {
	cl, w := newClient(t)
	namespace(t, cl, "selectors")
	ctx := context.Background()
	create := func(doc string) error { return cl.Create(ctx, object(t, doc)) }
	route := func(name, labels string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ` + name + `, namespace: selectors, labels: ` + labels + `}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`
	}
	btp := func(name, targets string) string {
		return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: ` + name + `, namespace: selectors}
spec:
  ` + targets + `
  useClientProtocol: true`
	}
	require.NoError(t, create(route("labelled", "{team: a}")))
	require.NoError(t, create(route("other", "{team: b}")))
	// The store has seen both routes once a policy naming one of them gets no TargetNotFound.
	require.Eventually(t, func() bool {
		err := create(btp("probe", `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: other}]`))
		warnings := w.Take()
		if err == nil {
			require.NoError(t, cl.Delete(ctx, object(t, btp("probe", ""))))
		}
		return err == nil && len(warnings) == 0
	}, 10*time.Second, 50*time.Millisecond)
	w.Take() // the probe's DELETE warning

	require.NoError(t, create(btp("by-label", `targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]`)))
	assert.Empty(t, w.Take())
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: BackendTrafficPolicy.gateway.envoyproxy.io "on-labelled" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: HTTPRoute selectors/labelled already has BackendTrafficPolicy selectors/by-label; BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`,
		denial(create(btp("on-labelled", `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: labelled}]`))))

	// Relabel other: the selector now reaches it.
	other := object(t, route("other", "{team: b}"))
	require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(other), other))
	other.SetLabels(map[string]string{"team": "a"})
	require.NoError(t, cl.Update(ctx, other))
	want := `admission webhook "validate.policyattachment.io" denied the request: BackendTrafficPolicy.gateway.envoyproxy.io "on-other" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: HTTPRoute selectors/other already has BackendTrafficPolicy selectors/by-label; BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`
	require.Eventually(t, func() bool {
		err := create(btp("on-other", `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: other}]`))
		if err == nil {
			require.NoError(t, cl.Delete(ctx, object(t, btp("on-other", ""))))
		}
		return denial(err) == want
	}, 10*time.Second, 50*time.Millisecond)
}
