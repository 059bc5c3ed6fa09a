package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWarnMissingTargets(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, topology)
	cases := map[string]struct {
		refs string
		want []string
	}{
		"existing targets and sections": {
			refs: `[{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: https}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: checkout}]`,
		},
		"target not found": {
			refs: `[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: cart}]`,
			want: []string{"TargetNotFound: spec.targetRefs[0]: HTTPRoute app/cart not found; the policy takes effect once it exists"},
		},
		"section not found": {
			refs: `[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: payment}]`,
			want: []string{`SectionNotFound: spec.targetRefs[0].sectionName: HTTPRoute app/r1 has no route rule named "payment"; the policy takes effect once it does`},
		},
		"unsupported kinds are denied elsewhere, not warned about": {
			refs: `[{group: "", kind: Service, name: nope}]`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := policyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: `+tc.refs+`
  color: red`)
			errs, got := warnMissingTargets(&Request{Policy: p}, snap)
			assert.Empty(t, errs)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestEvaluateReportsEverything checks that one request gets every violation at once,
// in rule order, and that the warning rides along with the denials.
func TestEvaluateReportsEverything(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, topology, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  overrides: {color: red}`)
	v := judge(t, table, snap, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: edge, namespace: edge}
  - {group: "", kind: Service, name: b1}
  defaults: {color: green}
  overrides: {color: blue}`)
	var reasons []string
	for _, e := range v.Denials {
		reasons = append(reasons, ReasonOf(e)+" "+e.Field)
	}
	assert.Equal(t, []string{
		"InvalidTargetRef spec.targetRefs[2].kind",
		"RefNotPermitted spec.targetRefs[1].namespace",
		"MultipleMergeStrategies spec.overrides",
		"Conflicted spec.overrides",
	}, reasons)
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[1]: Gateway edge/edge not found; the policy takes effect once it exists"}, v.Warnings)
	assert.False(t, v.Allowed())
}

func TestEvaluateDeleteIsAllowed(t *testing.T) {
	table := BuiltinKindTable()
	p := policyOf(t, table, color(`defaults: {color: red}
  overrides: {color: blue}`))
	v := Evaluate(Request{Operation: Delete, Policy: p}, NewMemorySnapshot())
	assert.True(t, v.Allowed())
}
