package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateMergeStrategies(t *testing.T) {
	table := BuiltinKindTable()
	const oneStrategy = "a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`"
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"bare rules only (implicit atomic defaults)": {policy: color(`color: red`)},
		"defaults only": {policy: color(`defaults: {color: red}`)},
		"GEP-713 Example 3 p1: spec-level strategy with bare rules": {
			policy: color("colors: {dark: brown, light: red}\n  strategy: atomic"),
		},
		"GEP-713 Example 3 p3: patch overrides": {
			policy: color(`overrides: {colors: {light: yellow}, strategy: patch}`),
		},
		"defaults and overrides together": {
			policy: color("defaults: {color: red}\n  overrides: {color: blue}"),
			want: field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.overrides", ReasonMultipleMergeStrategies,
				"may not be set together with `defaults`; "+oneStrategy)},
		},
		"bare rules with overrides": {
			policy: color("color: red\n  overrides: {color: blue}"),
			want: field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.overrides", ReasonMultipleMergeStrategies,
				"may not be set together with bare rules (`color`); "+oneStrategy)},
		},
		"all three": {
			policy: color("color: red\n  defaults: {color: green}\n  overrides: {color: blue}"),
			want: field.ErrorList{
				reasonErr(field.ErrorTypeForbidden, "spec.defaults", ReasonMultipleMergeStrategies, "may not be set together with bare rules (`color`); "+oneStrategy),
				reasonErr(field.ErrorTypeForbidden, "spec.overrides", ReasonMultipleMergeStrategies, "may not be set together with bare rules (`color`); "+oneStrategy),
			},
		},
		"Experimental GEP stanza names default and override": {
			policy: color("default: {color: red}\n  override: {color: blue}"),
			want: field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.override", ReasonMultipleMergeStrategies,
				"may not be set together with `default`; "+oneStrategy)},
		},
		"strategy value the kind does not support": {
			policy: color(`defaults: {color: red, strategy: merge}`),
			want:   field.ErrorList{reasonErr(field.ErrorTypeNotSupported, "spec.defaults.strategy", ReasonMultipleMergeStrategies, `supported values: "atomic", "patch"`)},
		},
		"two different strategy values": {
			policy: color("strategy: atomic\n  defaults: {color: red, strategy: patch}"),
			want: field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.defaults.strategy", ReasonMultipleMergeStrategies,
				"patch conflicts with `spec.strategy` atomic; declare the strategy once")},
		},
		"strategy that is not a string": {
			policy: color("defaults: {color: red, strategy: [atomic]}"),
			want:   field.ErrorList{reasonErr(field.ErrorTypeInvalid, "spec.defaults.strategy", ReasonMultipleMergeStrategies, `must be a string, one of "atomic", "patch"`)},
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
			want: field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.defaults", ReasonMultipleMergeStrategies,
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
			want: field.ErrorList{reasonErr(field.ErrorTypeNotSupported, "spec.mergeType", ReasonMultipleMergeStrategies, `supported values: "JSONMerge", "StrategicMerge"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := validateMergeStrategies(&Request{Operation: Create, Policy: policyOf(t, table, tc.policy)}, NewMemorySnapshot())
			matcher.Test(t, tc.want, got)
		})
	}

	t.Run("a row may opt in to defaults with overrides", func(t *testing.T) {
		row := *mustRow(t, table, "policies.controller.io", "ColorPolicy")
		row.Stanzas.AllowDefaultsWithOverrides = true
		lenient := NewKindTable()
		if err := lenient.Put(row); err != nil {
			t.Fatal(err)
		}
		got, _ := validateMergeStrategies(&Request{Policy: policyOf(t, lenient, color("defaults: {color: red}\n  overrides: {color: blue}"))}, NewMemorySnapshot())
		matcher.Test(t, nil, got)
	})
}

// color is a ColorPolicy in app on HTTPRoute r1 with the given spec lines.
func color(spec string) string {
	return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
}
