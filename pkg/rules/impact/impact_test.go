package impact

import (
	"fmt"
	"testing"

	"github.com/policyattachment/webhook/internal/rulestest"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImpactForAnnotationIsBounded(t *testing.T) {
	refs := make([]string, 3000)
	for i := range refs {
		refs[i] = fmt.Sprintf("team-%d/route-policy", i)
	}
	im := Impact{Status: StatusEnforced, Overrides: refs, OverriddenBy: refs[:3]}
	got := im.ForAnnotation()
	assert.Len(t, got.Overrides, MaxAnnotatedRefs)
	assert.Equal(t, refs[:MaxAnnotatedRefs], got.Overrides)
	assert.Equal(t, 3000, got.OverridesTotal)
	assert.Equal(t, refs[:3], got.OverriddenBy)
	assert.Zero(t, got.OverriddenByTotal, "a short list is left alone")
	assert.Len(t, im.Overrides, 3000, "the original is unchanged")

	assert.Equal(t, "a, b", refList([]string{"a", "b"}, 0))
	assert.Equal(t, "a, b, c, d, e and 2995 more", refList([]string{"a", "b", "c", "d", "e", "f"}, 3000))
	assert.Equal(t, "a, b, c, d, e and 1 more", refList([]string{"a", "b", "c", "d", "e", "f"}, 0))
}

// The policy a caller stored and the compact copy the snapshot keeps are one policy to
// the impact walk: asked about either, it does not count the other as overriding it.
func TestImpactOfTheStoredPolicyOrItsCopy(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {parentRefs: [{name: gw}], rules: [{name: a, backendRefs: [{name: b1, port: 80}]}, {name: b, backendRefs: [{name: b2, port: 80}]}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-blue, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  color: blue`)
	p := rulestest.PolicyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  overrides: {color: red}`)
	stored := snap.PutPolicy(p)
	require.NotSame(t, p, stored)
	want := Impact{Status: StatusEnforced, Contexts: 2, Enforced: 2, Overrides: []string{"app/route-blue"}, OverriddenBy: []string{}}
	assert.Equal(t, want, Of(snap, stored, nil))
	assert.Equal(t, want, Of(snap, p, nil))
}
