package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
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
