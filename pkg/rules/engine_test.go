package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// TestEvaluateReportsEverything checks that one request gets every violation at once,
// in rule order, and that the warning rides along with the denials.
func TestEvaluateReportsEverything(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.Topology, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  overrides: {color: red}`)
	v := rulestest.Judge(t, table, snap, `
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
	want := field.ErrorList{
		rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[2].kind", validation.ReasonInvalidTargetRef,
			`supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`),
		rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[1].namespace", validation.ReasonRefNotPermitted,
			`no ReferenceGrant in namespace "edge" lets ColorPolicy from namespace "app" reference Gateway "edge"`),
		rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonMultipleMergeStrategies,
			"may not be set together with `defaults`; a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`"),
		rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted,
			`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail),
	}
	rulestest.Matcher.Test(t, want, v.Denials)
	for i, e := range v.Denials {
		require.Equal(t, want[i].Origin, e.Origin, "in rule order") // the matcher ignores order
	}
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[1]: Gateway edge/edge not found; the policy takes effect once it exists"}, v.Warnings)
	assert.False(t, v.Allowed())
}

func TestEvaluateDeleteIsAllowed(t *testing.T) {
	table := kinds.BuiltinKindTable()
	p := rulestest.PolicyOf(t, table, rulestest.Color(`defaults: {color: red}
  overrides: {color: blue}`))
	v := rules.Evaluate(rules.Request{Operation: rules.Delete, Policy: p}, index.New())
	assert.True(t, v.Allowed())
}

// A policy judged twice (the webhook judges again when the state moved between verdict and
// reservation) gets the same denials both times.
func TestEvaluateTwiceGivesTheSameDenials(t *testing.T) {
	table := kinds.BuiltinKindTable()
	p := rulestest.PolicyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [7]
  color: red`)
	want := field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[0]", validation.ReasonInvalidTargetRef,
		"must be an object with `group`, `kind` and `name`")}
	for range 2 {
		v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: p}, index.New())
		rulestest.Matcher.Test(t, want, v.Denials)
	}
}
