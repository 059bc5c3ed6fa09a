package impact

import (
	"fmt"
	"testing"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The annotation on a tenant's policy names policies in other namespaces only by kind and
// namespace (once per namespace), unless the config reveals them.
func TestImpactForAnnotationHidesOtherNamespaces(t *testing.T) {
	im := Impact{Status: StatusPartiallyEnforced,
		Overrides:    []string{"app/local", "payments/secret-a", "payments/secret-b", "web/other"},
		OverriddenBy: []string{"infra/payments-internal-token-abc123"}}
	p := &policy.Policy{Row: &kinds.KindRow{Kind: "ColorPolicy"}, Namespace: "app"}
	got := im.ForAnnotation(p, nil)
	assert.Equal(t, []string{"app/local", `a ColorPolicy in namespace "payments"`, `a ColorPolicy in namespace "web"`}, got.Overrides)
	assert.Equal(t, []string{`a ColorPolicy in namespace "infra"`}, got.OverriddenBy)
	assert.Equal(t, "app/local", im.Overrides[0], "the original is unchanged")

	revealed := im.ForAnnotation(p, &validation.Messages{RevealOtherNamespaces: true})
	assert.Equal(t, im.Overrides, revealed.Overrides)
	assert.Equal(t, im.OverriddenBy, revealed.OverriddenBy)
}

func TestImpactForAnnotationIsBounded(t *testing.T) {
	refs := make([]string, 3000)
	for i := range refs {
		refs[i] = fmt.Sprintf("team-%d/route-policy", i)
	}
	im := Impact{Status: StatusEnforced, Overrides: refs, OverriddenBy: refs[:3]}
	p := &policy.Policy{Row: &kinds.KindRow{Kind: "ColorPolicy"}, Namespace: "infra"}
	got := im.ForAnnotation(p, &validation.Messages{RevealOtherNamespaces: true})
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

// A setting survives only where the policy is its source (issue 17, part 1): an equal
// value from another policy is that policy's win, not this one's.
func TestImpactByProvenanceNotByValue(t *testing.T) {
	table := kinds.BuiltinKindTable()
	world := func(policies string) *index.Snapshot {
		return rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}, {name: https, protocol: HTTPS, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {parentRefs: [{name: gw}], rules: [{name: main, backendRefs: [{name: b1, port: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
`+policies)
	}
	stored := func(snap *index.Snapshot, kind, name string) *policy.Policy {
		p, ok := snap.GetPolicy(rulestest.SchemaGK(kinds.GatewayGroup, kind), "app", name)
		if kind == "ColorPolicy" {
			p, ok = snap.GetPolicy(rulestest.SchemaGK("policies.controller.io", kind), "app", name)
		}
		require.True(t, ok, name)
		return p
	}

	t.Run("the newer of two Direct policies with equal values is not enforced (GEP-713 Standard Example 1)", func(t *testing.T) {
		snap := world(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: older, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: http}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: newer, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: http}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`)
		// observedAt: the other of the two, the policy the prediction rests on
		assert.Equal(t, Impact{Status: StatusOverridden, Contexts: 1, Overridden: 1,
			Overrides: []string{}, OverriddenBy: []string{"app/older"}, ObservedAt: "2024-01-01T00:00:00Z"}, Of(snap, stored(snap, "BackendTLSPolicy", "newer"), nil))
		assert.Equal(t, Impact{Status: StatusEnforced, Contexts: 1, Enforced: 1,
			Overrides: []string{"app/newer"}, OverriddenBy: []string{}, ObservedAt: "2024-01-02T00:00:00Z"}, Of(snap, stored(snap, "BackendTLSPolicy", "older"), nil))
	})

	t.Run("a Gateway's policy is not enforced on the listener a section policy sets, even to the same value", func(t *testing.T) {
		snap := world(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: whole-gateway, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: red
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: https-only, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}]
  color: red`)
		assert.Equal(t, Impact{Status: StatusPartiallyEnforced, Contexts: 2, Enforced: 1, Overridden: 1,
			Overrides: []string{}, OverriddenBy: []string{"app/https-only"}}, Of(snap, stored(snap, "ColorPolicy", "whole-gateway"), nil))
		assert.Equal(t, Impact{Status: StatusEnforced, Contexts: 1, Enforced: 1,
			Overrides: []string{"app/whole-gateway"}, OverriddenBy: []string{}}, Of(snap, stored(snap, "ColorPolicy", "https-only"), nil))
	})
}
