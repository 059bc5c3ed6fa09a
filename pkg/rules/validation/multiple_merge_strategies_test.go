package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func TestValidateMergeStrategies(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const oneStrategy = "a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`"
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"bare rules only (implicit atomic defaults)": {policy: rulestest.Color(`color: red`)},
		"defaults only": {policy: rulestest.Color(`defaults: {color: red}`)},
		"GEP-713 Example 3 p1: spec-level strategy with bare rules": {
			policy: rulestest.Color("colors: {dark: brown, light: red}\n  strategy: atomic"),
		},
		"GEP-713 Example 3 p3: patch overrides": {
			policy: rulestest.Color(`overrides: {colors: {light: yellow}, strategy: patch}`),
		},
		"defaults and overrides together": {
			policy: rulestest.Color("defaults: {color: red}\n  overrides: {color: blue}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonMultipleMergeStrategies,
				"may not be set together with `defaults`; "+oneStrategy)},
		},
		"bare rules with overrides": {
			policy: rulestest.Color("color: red\n  overrides: {color: blue}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonMultipleMergeStrategies,
				"may not be set together with bare rules (`color`); "+oneStrategy)},
		},
		"all three": {
			policy: rulestest.Color("color: red\n  defaults: {color: green}\n  overrides: {color: blue}"),
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.defaults", validation.ReasonMultipleMergeStrategies, "may not be set together with bare rules (`color`); "+oneStrategy),
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonMultipleMergeStrategies, "may not be set together with bare rules (`color`); "+oneStrategy),
			},
		},
		"Experimental GEP stanza names default and override": {
			policy: rulestest.Color("default: {color: red}\n  override: {color: blue}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.override", validation.ReasonMultipleMergeStrategies,
				"may not be set together with `default`; "+oneStrategy)},
		},
		"strategy value the kind does not support": {
			policy: rulestest.Color(`defaults: {color: red, strategy: merge}`),
			want:   field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.defaults.strategy", validation.ReasonMultipleMergeStrategies, `supported values: "atomic", "patch"`)},
		},
		"two different strategy values": {
			policy: rulestest.Color("strategy: atomic\n  defaults: {color: red, strategy: patch}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.defaults.strategy", validation.ReasonMultipleMergeStrategies,
				"patch conflicts with `spec.strategy` atomic; declare the strategy once")},
		},
		"strategy that is not a string": {
			policy: rulestest.Color("defaults: {color: red, strategy: [atomic]}"),
			want:   field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.defaults.strategy", validation.ReasonMultipleMergeStrategies, `must be a string, one of "atomic", "patch"`)},
		},
		"Kuadrant RateLimitPolicy defaults with bare limits": {
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  limits: {a: {rates: [{limit: 1, window: 1s}]}}
  defaults: {strategy: merge, limits: {b: {rates: [{limit: 2, window: 1s}]}}}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.defaults", validation.ReasonMultipleMergeStrategies,
				"may not be set together with bare rules (`limits`); "+oneStrategy)},
		},
		"Envoy Gateway mergeType values": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  mergeType: Patch
  timeout: {http: {requestTimeout: 5s}}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.mergeType", validation.ReasonMultipleMergeStrategies, `supported values: "JSONMerge", "StrategicMerge"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateMergeStrategies(rulestest.PolicyOf(t, table, tc.policy), index.New(), nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}

	t.Run("a row may opt in to defaults with overrides", func(t *testing.T) {
		row := *rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
		row.Stanzas.AllowDefaultsWithOverrides = true
		lenient := kinds.NewKindTable()
		if err := lenient.Put(row); err != nil {
			t.Fatal(err)
		}
		got := validation.ValidateMergeStrategies(rulestest.PolicyOf(t, lenient, rulestest.Color("defaults: {color: red}\n  overrides: {color: blue}")), index.New(), nil)
		rulestest.Matcher.Test(t, nil, got)
	})
}

// Envoy Gateway's mergeType may be set only on a policy whose every target is an xRoute
// (envoyextensionpolicy_types.go CEL: "mergeType can only be used with xRoute targets"),
// by reference or by selector; a selector-only policy is admitted.
func TestMergeTypeOnlyOnRouteTargets(t *testing.T) {
	table := kinds.BuiltinKindTable()
	eep := func(spec string) string {
		return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: p, namespace: app}
spec:
  ` + spec
	}
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"on a route":        {policy: eep("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\n  mergeType: StrategicMerge")},
		"by route selector": {policy: eep("targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]\n  mergeType: JSONMerge")},
		"on a Gateway": {
			policy: eep("targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  mergeType: StrategicMerge"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.mergeType", validation.ReasonMultipleMergeStrategies,
				"may be set only when every target is one of HTTPRoute, GRPCRoute, UDPRoute, TCPRoute, TLSRoute; this policy targets a Gateway")},
		},
		"by Gateway selector": {
			policy: eep("targetSelectors: [{kind: Gateway, matchLabels: {team: a}}]\n  mergeType: StrategicMerge"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.mergeType", validation.ReasonMultipleMergeStrategies,
				"may be set only when every target is one of HTTPRoute, GRPCRoute, UDPRoute, TCPRoute, TLSRoute; this policy targets a Gateway")},
		},
		"Replace is no mergeType of EnvoyExtensionPolicy": {
			policy: eep("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\n  mergeType: Replace"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.mergeType", validation.ReasonMultipleMergeStrategies,
				`supported values: "JSONMerge", "StrategicMerge"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, tc.policy)
			rulestest.Matcher.Test(t, tc.want, validation.ValidateMergeStrategies(p, index.New(), nil))
			rulestest.Matcher.Test(t, nil, validation.ValidateTargetRefs(p, index.New(), nil))
		})
	}
}
