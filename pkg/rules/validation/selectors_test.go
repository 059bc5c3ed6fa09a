package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// selectorWorld re-expresses Envoy Gateway's
// internal/gatewayapi/testdata/policy-cross-namespace-targetselector-missing-partial-referencegrant-route-target.in.yaml
// (commit d32f2829): one Gateway that admits routes from every namespace, a route labelled
// policy=selected in each of three namespaces and one in the policy's own, and a
// ReferenceGrant in target-a only. Namespace target-b is labelled for the Selector case.
const selectorWorld = `
apiVersion: v1
kind: Namespace
metadata: {name: target-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: target-b, labels: {tier: shared}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: gateway-ns}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: allowed, namespace: target-a, labels: {policy: selected}}
spec: {parentRefs: [{name: gw, namespace: gateway-ns}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: denied, namespace: target-b, labels: {policy: selected}}
spec: {parentRefs: [{name: gw, namespace: gateway-ns}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: denied, namespace: target-c, labels: {policy: selected}}
spec: {parentRefs: [{name: gw, namespace: gateway-ns}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: own, namespace: policy-ns, labels: {policy: selected, tier: gold}}
spec: {parentRefs: [{name: gw, namespace: gateway-ns}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: allow-btp, namespace: target-a}
spec:
  from: [{group: gateway.envoyproxy.io, kind: BackendTrafficPolicy, namespace: policy-ns}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: allowed}]
`

func btp(name, ns, created, targets string) string {
	return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: ` + name + `, namespace: ` + ns + `, creationTimestamp: "` + created + `"}
spec:
  ` + targets + `
  useClientProtocol: true`
}

// Which objects a selector reaches decides which other policies it conflicts with
// (BackendTrafficPolicy: one per target, the oldest wins).
func TestSelectedTargetsConflict(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const older = "2024-01-01T00:00:00Z"
	const newer = "2025-01-01T00:00:00Z"
	conflict := func(path, target, other string) *field.Error {
		return rulestest.ReasonErr(field.ErrorTypeForbidden, path, validation.ReasonConflicted,
			target+" already has "+other+"; BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")
	}
	cases := map[string]struct {
		world  string
		policy string
		want   field.ErrorList
	}{
		"a selector in its own namespace meets the policy on the route it selects": {
			world:  btp("by-ref", "policy-ns", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: own}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: selected}}]`),
			want: field.ErrorList{conflict("spec.targetSelectors[0]", "HTTPRoute policy-ns/own",
				"BackendTrafficPolicy policy-ns/by-ref")},
		},
		"a named route meets the policy whose selector selects it": {
			world:  btp("by-label", "policy-ns", older, `targetSelectors: [{kind: HTTPRoute, matchExpressions: [{key: tier, operator: In, values: [gold, silver]}]}]`),
			policy: btp("by-ref", "policy-ns", newer, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: own}]`),
			want: field.ErrorList{conflict("spec.targetRefs[0]", "HTTPRoute policy-ns/own",
				"BackendTrafficPolicy policy-ns/by-label")},
		},
		"a selector without namespaces selects in its own namespace only": {
			world:  btp("on-a", "target-a", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: allowed}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: selected}}]`),
		},
		"all namespaces: a granted route is selected": {
			world:  btp("on-a", "target-a", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: allowed}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, namespaces: {from: All}, matchLabels: {policy: selected}}]`),
			want: field.ErrorList{conflict("spec.targetSelectors[0]", `an HTTPRoute in namespace "target-a"`,
				`a BackendTrafficPolicy in namespace "target-a"`)},
		},
		"all namespaces: a route without a ReferenceGrant is not a target": {
			world:  btp("on-b", "target-b", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: denied}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, namespaces: {from: All}, matchLabels: {policy: selected}}]`),
		},
		"namespaces by selector": {
			world: `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: allow-btp, namespace: target-b}
spec:
  from: [{group: gateway.envoyproxy.io, kind: BackendTrafficPolicy, namespace: policy-ns}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
---` + btp("on-b", "target-b", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: denied}]`) + `
---` + btp("on-a", "target-a", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: allowed}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, namespaces: {from: Selector, selector: {matchLabels: {tier: shared}}}, matchLabels: {policy: selected}}]`),
			want: field.ErrorList{conflict("spec.targetSelectors[0]", `an HTTPRoute in namespace "target-b"`,
				`a BackendTrafficPolicy in namespace "target-b"`)},
		},
		"labels that do not match select nothing": {
			world:  btp("by-ref", "policy-ns", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: own}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: selected, tier: bronze}}]`),
		},
		"another kind is not selected": {
			world:  btp("by-ref", "policy-ns", older, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: own}]`),
			policy: btp("by-label", "policy-ns", newer, `targetSelectors: [{kind: GRPCRoute, matchLabels: {policy: selected}}]`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, selectorWorld, tc.world)
			v := rulestest.Judge(t, table, snap, tc.policy)
			rulestest.Matcher.Test(t, tc.want, v.Denials)
		})
	}
}

// A policy that selects nothing, or selects routes it may not reference, is admitted and
// told why it reaches less than its selector says.
func TestSelectorWarnings(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, selectorWorld)
	cases := map[string]struct {
		targets string
		want    []string
	}{
		"selects in its namespace": {
			targets: `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: selected}}]`,
		},
		"selects nothing": {
			targets: `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: none}}]`,
			want:    []string{"SelectsNothing: spec.targetSelectors[0]: selects no HTTPRoute now; the policy takes effect on those whose labels match once they exist"},
		},
		"selects routes without a grant, counted and not named": {
			targets: `targetSelectors: [{kind: HTTPRoute, namespaces: {from: All}, matchLabels: {policy: selected}}]`,
			want:    []string{`SelectionNotPermitted: spec.targetSelectors[0]: selects 2 HTTPRoutes in 2 other namespaces that no ReferenceGrant lets BackendTrafficPolicy from namespace "policy-ns" reference; they are not targets`},
		},
		"selects only routes without a grant": {
			targets: `targetSelectors: [{kind: HTTPRoute, namespaces: {from: Selector, selector: {matchLabels: {tier: shared}}}, matchLabels: {policy: selected}}]`,
			want: []string{
				`SelectionNotPermitted: spec.targetSelectors[0]: selects 1 HTTPRoute in 1 other namespace that no ReferenceGrant lets BackendTrafficPolicy from namespace "policy-ns" reference; they are not targets`,
				"SelectsNothing: spec.targetSelectors[0]: selects no HTTPRoute now; the policy takes effect on those whose labels match once they exist",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, btp("p", "policy-ns", "2025-01-01T00:00:00Z", tc.targets))
			assert.Equal(t, tc.want, validation.WarnMissingTargets(p, snap))
		})
	}
}

// A label written to a route after both policies were admitted creates a conflict no
// policy write revealed; the selecting policy, judged again (as the audit judges every
// stored policy), is denied.
func TestLabelWrittenLaterConflicts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, selectorWorld,
		btp("by-ref", "policy-ns", "2024-01-01T00:00:00Z", `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: other}]`),
		btp("by-label", "policy-ns", "2025-01-01T00:00:00Z", `targetSelectors: [{kind: HTTPRoute, matchLabels: {policy: selected}}]`))
	stored, ok := snap.GetPolicy(rulestest.SchemaGK("gateway.envoyproxy.io", "BackendTrafficPolicy"), "policy-ns", "by-label")
	require.True(t, ok)
	judge := func() rules.Verdict {
		return rules.Evaluate(rules.Request{Operation: rules.Update, Policy: stored, OldPolicy: stored}, snap)
	}
	route := func(labels string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other, namespace: policy-ns, labels: ` + labels + `}
spec: {parentRefs: [{name: gw, namespace: gateway-ns}]}`
	}
	add := func(doc string) {
		obj := rulestest.Decode(t, doc)
		_, err := snap.AddResource(rulestest.GroupKindOf(t, obj), obj)
		require.NoError(t, err)
	}
	add(route(`{policy: other}`))
	assert.Empty(t, judge().Denials)
	add(route(`{policy: selected}`))
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetSelectors[0]", validation.ReasonConflicted,
		"HTTPRoute policy-ns/other already has BackendTrafficPolicy policy-ns/by-ref; BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		judge().Denials)
	add(route(`{}`))
	assert.Empty(t, judge().Denials)
}
