package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// A policy that names its targets in a field its kind does not have is denied for that
// field alone: the implementation never reads the field (the API server prunes it), so its
// references are judged by no other rule (no Conflicted, no RefNotPermitted) and warned
// about by none.
func TestTargetFieldTheKindDoesNotHave(t *testing.T) {
	table := kinds.BuiltinKindTable()
	world := []string{rulestest.Topology, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  color: red`}
	cases := map[string]struct {
		policy   string
		want     field.ErrorList
		warnings []string
	}{
		"targetRef on a kind with targetRefs only, where another policy sets another value": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  color: blue`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonInvalidTargetRef,
					"not supported by ColorPolicy; use `targetRefs`"),
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0].namespace", validation.ReasonRefNotPermitted,
					`no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`),
			},
		},
		"targetRefs into another namespace on a kind with targetRef only": {
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge, namespace: edge}]
  limits: {global: {rates: [{limit: 5, window: 10s}]}}`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs", validation.ReasonInvalidTargetRef,
					"not supported by RateLimitPolicy; use `targetRef`"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := rulestest.Judge(t, table, rulestest.World(t, table, world...), tc.policy)
			rulestest.Matcher.Test(t, tc.want, v.Denials)
			assert.Equal(t, tc.warnings, v.Warnings)
		})
	}
}
