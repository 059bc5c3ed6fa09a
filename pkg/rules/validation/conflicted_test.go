package validation_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/internal/rulestest"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

func TestValidateConflicts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	existing := func(name, spec string) string {
		return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
	}
	cases := map[string]struct {
		world  []string
		policy string
		want   field.ErrorList
	}{
		"atomic defaults with another value": {
			world:  []string{existing("old", `color: red`)},
			policy: rulestest.Color(`color: blue`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)},
		},
		"identical values are no conflict": {
			world:  []string{existing("old", `color: red`)},
			policy: rulestest.Color(`color: red`),
		},
		"defaults against overrides at one level are no conflict": {
			world:  []string{existing("old", `overrides: {color: red}`)},
			policy: rulestest.Color(`defaults: {color: blue}`),
		},
		"bare rules and defaults are one stanza class": {
			world:  []string{existing("old", `defaults: {color: red}`)},
			policy: rulestest.Color(`color: blue`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)},
		},
		"patch: different scalar paths are no conflict": {
			world:  []string{existing("old", `overrides: {strategy: patch, colors: {dark: brown}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {light: yellow}}`),
		},
		"patch: the same scalar path with another value": {
			world:  []string{existing("old", `overrides: {strategy: patch, colors: {dark: brown, light: red}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {dark: brown, light: yellow}}`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides.colors.light", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets overrides "colors.light" to "red" (this policy: "yellow"); `+rulestest.OrderDetail)},
		},
		"patch against atomic compares whole blocks": {
			world:  []string{existing("old", `overrides: {colors: {dark: brown}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {light: yellow}}`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic overrides to {"colors":{"dark":"brown"}} (this policy: {"colors":{"light":"yellow"}}); `+rulestest.OrderDetail)},
		},
		"another section of the same route is another level": {
			world: []string{existing("old", `color: red`)},
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: checkout}]
  color: blue`,
		},
		"an UPDATE is not compared with its own stored version": {
			world:  []string{existing("p", `color: red`)},
			policy: rulestest.Color(`color: blue`),
		},
		"Kuadrant merge: named rules with the same name and another value": {
			world: []string{`
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: old, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  defaults:
    strategy: merge
    limits:
      per-user: {rates: [{limit: 10, window: 1m}]}
      global: {rates: [{limit: 1000, window: 1m}]}`},
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  defaults:
    strategy: merge
    limits:
      per-user: {rates: [{limit: 20, window: 1m}]}
      burst: {rates: [{limit: 5, window: 1s}]}
      global: {rates: [{limit: 1000, window: 1m}]}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.defaults.limits.per-user", validation.ReasonConflicted,
				`RateLimitPolicy app/old on HTTPRoute app/r1 also sets defaults "limits.per-user" to {"rates":[{"limit":10,"window":"1m"}]} (this policy: {"rates":[{"limit":20,"window":"1m"}]}); `+rulestest.OrderDetail)},
		},
		"Direct kind: a second policy on one Service port": {
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: old, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`},
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: b1}
  - {group: "", kind: Service, name: b1, sectionName: https}
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[1]", validation.ReasonConflicted,
				"Service app/b1 section https already has BackendTLSPolicy app/old; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, tc.world...)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Where Warn let conflicting policies pile up at one target, a review reports the ten
// highest, not all of them.
func TestConflictsReportedAreBounded(t *testing.T) {
	table := kinds.BuiltinKindTable()
	var docs []string
	for i := 0; i < 15; i++ {
		docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: old-%02d, namespace: app, creationTimestamp: "2024-01-01T00:00:%02dZ"}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`, i, i))
	}
	snap := rulestest.World(t, table, docs...)
	v := rulestest.Judge(t, table, snap, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: new, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`)
	var want field.ErrorList
	for i := range validation.MaxConflictingPolicies {
		want = append(want, rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted, fmt.Sprintf(
			"Service app/b1 section https already has BackendTLSPolicy app/old-%02d; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)", i)))
	}
	rulestest.Matcher.Test(t, want, v.Denials) // the ten oldest...
	for i, e := range v.Denials {
		require.Equal(t, want[i].Detail, e.Detail, "...oldest first") // the matcher ignores order
	}
}
