package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/internal/rulestest"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

func TestWarnMissingTargets(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.Topology)
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
			p := rulestest.PolicyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: `+tc.refs+`
  color: red`)
			got := validation.WarnMissingTargets(p, snap)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A selector-only policy is admitted with a warning that says what is not checked.
func TestWarnSelectorNotResolved(t *testing.T) {
	table := kinds.BuiltinKindTable()
	row, ok := kinds.DiscoveredRow("example.com", "SelectPolicy", kinds.Namespaced, "Direct")
	require.True(t, ok)
	require.NoError(t, table.Put(row))
	p := rulestest.PolicyOf(t, table, `
apiVersion: example.com/v1
kind: SelectPolicy
metadata: {name: p, namespace: app}
spec:
  targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]
  retries: 3`)
	assert.Equal(t, []string{"SelectorNotResolved: spec.targetSelectors: this webhook does not resolve label selectors yet, so conflicts and impact through the objects they select are not checked; targetRefs are"},
		validation.WarnMissingTargets(p, index.New()))
}
