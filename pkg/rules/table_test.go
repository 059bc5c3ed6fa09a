package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinKindTable(t *testing.T) {
	table := BuiltinKindTable()
	want := []string{
		"gateway.envoyproxy.io/BackendTrafficPolicy", "gateway.envoyproxy.io/ClientTrafficPolicy",
		"gateway.envoyproxy.io/EnvoyExtensionPolicy", "gateway.envoyproxy.io/SecurityPolicy",
		"gateway.networking.k8s.io/BackendTLSPolicy", "gateway.networking.x-k8s.io/XBackendTrafficPolicy",
		"gateway.nginx.org/ClientSettingsPolicy", "gateway.nginx.org/ObservabilityPolicy",
		"kuadrant.io/AuthPolicy", "kuadrant.io/DNSPolicy", "kuadrant.io/RateLimitPolicy", "kuadrant.io/TLSPolicy",
		"policies.controller.io/ColorPolicy",
	}
	var got []string
	for _, r := range table.Rows() {
		got = append(got, r.Group+"/"+r.Kind)
		assert.Equal(t, "builtin", r.Source)
	}
	assert.Equal(t, want, got)

	btls := mustRow(t, table, "gateway.networking.k8s.io", "BackendTLSPolicy")
	assert.Equal(t, Direct, btls.Class)
	assert.Equal(t, []TargetKind{{Group: "", Kind: "Service", Section: ServicePort}}, btls.Targets)
	assert.True(t, btls.UniqueSectionPerTarget)

	auth := mustRow(t, table, "kuadrant.io", "AuthPolicy")
	assert.Equal(t, []string{"targetRef"}, auth.TargetRefFields)
	assert.Equal(t, map[string]string{"atomic": "atomic", "merge": "merge"}, auth.Strategy.Values)
	assert.Equal(t, []string{"rules", "patterns", "when"}, auth.Stanzas.Bare)

	tls := mustRow(t, table, "kuadrant.io", "TLSPolicy")
	assert.Equal(t, IssuerReferenceShape, tls.References[0].Shape)
	assert.Equal(t, []string{"ClusterIssuer"}, tls.References[0].ClusterScopedKinds)

	// The YAML anchors shared between Envoy Gateway rows resolve to the same targets.
	assert.Equal(t, mustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy").Targets,
		mustRow(t, table, "gateway.envoyproxy.io", "EnvoyExtensionPolicy").Targets)
}

func TestKindTableLoad(t *testing.T) {
	cases := map[string]struct {
		config  string
		wantErr string
	}{
		"replaces a built-in row": {
			config: `
kinds:
- group: policies.controller.io
  kind: ColorPolicy
  class: Direct
  targets: [{group: "", kind: Service, section: ServicePort}]`,
		},
		"unknown field": {
			config:  "kinds:\n- {group: a.io, kind: P, class: Direct, targets: [{kind: Service}], colour: red}",
			wantErr: `cfg.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "colour"`,
		},
		"no kinds": {
			config:  "kinds: []",
			wantErr: "cfg.yaml: no kinds listed under `kinds`",
		},
		"bad class, strategy and section": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Sometimes
  targets: [{group: gateway.networking.k8s.io, kind: Gateway, section: Port}]
  strategy: {field: strategy, values: {x: sideways}}`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: class "Sometimes" must be Direct or Inherited; strategy value "x" maps to "sideways"; must be atomic, patch or merge; target Gateway section "Port" must be Listener, RouteRule or ServicePort`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := BuiltinKindTable()
			err := table.Load([]byte(tc.config), "cfg.yaml")
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Len(t, table.Rows(), 13, "a bad file adds nothing")
				return
			}
			require.NoError(t, err)
			row := mustRow(t, table, "policies.controller.io", "ColorPolicy")
			assert.Equal(t, Direct, row.Class)
			assert.Equal(t, "cfg.yaml", row.Source)
			assert.Equal(t, Namespaced, row.Scope, "scope defaults to Namespaced")
			assert.Equal(t, []string{"targetRefs"}, row.TargetRefFields, "targetRefs is the default field")
		})
	}
}

func TestDiscoveredRow(t *testing.T) {
	for _, value := range []string{"Direct", "direct", "DIRECT"} {
		row, ok := DiscoveredRow("a.io", "P", Namespaced, value)
		require.True(t, ok, value)
		assert.Equal(t, Direct, row.Class)
		assert.Empty(t, row.Stanzas.Defaults, "a Direct kind has no defaults stanza")
	}
	for _, value := range []string{"Inherited", "inherited", "true", "True"} {
		row, ok := DiscoveredRow("a.io", "P", Cluster, value)
		require.True(t, ok, value)
		assert.Equal(t, Inherited, row.Class)
		assert.Equal(t, Cluster, row.Scope)
		assert.True(t, row.CrossNamespaceTargets)
		_, ok = row.Target("", "Service")
		assert.True(t, ok, "generic rows may target Service")
		assert.NoError(t, validateRow(&row))
	}
	for _, value := range []string{"", "false", "yes"} {
		_, ok := DiscoveredRow("a.io", "P", Namespaced, value)
		assert.False(t, ok, value)
	}
}

func TestSettings(t *testing.T) {
	b := Block{Body: map[string]any{
		"colors":  map[string]any{"dark": "brown", "light": "red"},
		"retryOn": []any{"501", "502"},
		"limits":  map[string]any{"a": map[string]any{"x": int64(1)}, "b": map[string]any{"x": int64(2)}},
	}}
	assert.Equal(t, []Setting{{Path: "", Value: b.Body}}, b.Settings(StrategyAtomic, nil))
	assert.Equal(t, []Setting{
		{Path: "colors.dark", Value: "brown"}, {Path: "colors.light", Value: "red"},
		{Path: "limits.a.x", Value: int64(1)}, {Path: "limits.b.x", Value: int64(2)},
		{Path: "retryOn", Value: []any{"501", "502"}},
	}, b.Settings(StrategyPatch, nil))
	assert.Equal(t, []Setting{
		{Path: "colors", Value: map[string]any{"dark": "brown", "light": "red"}},
		{Path: "limits.a", Value: map[string]any{"x": int64(1)}}, {Path: "limits.b", Value: map[string]any{"x": int64(2)}},
		{Path: "retryOn", Value: []any{"501", "502"}},
	}, b.Settings(StrategyMerge, []string{"limits"}))
	assert.Equal(t, StrategyAtomic, CoarserStrategy(StrategyPatch, StrategyAtomic))
	assert.Equal(t, StrategyMerge, CoarserStrategy(StrategyPatch, StrategyMerge))
}

func TestPolicyOrder(t *testing.T) {
	table := BuiltinKindTable()
	mk := func(ns, name, ts string) *Policy {
		return policyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: `+name+`, namespace: `+ns+`, creationTimestamp: "`+ts+`"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`)
	}
	older := mk("b", "z", "2024-01-01T00:00:00Z")
	newer := mk("a", "a", "2024-01-02T00:00:00Z")
	assert.True(t, older.Higher(newer), "older creationTimestamp is higher")
	assert.False(t, newer.Higher(older))
	foobar, foobaz := mk("foo", "bar", "2024-01-01T00:00:00Z"), mk("foo", "baz", "2024-01-01T00:00:00Z")
	assert.True(t, foobar.Higher(foobaz), "ties go to {namespace}/{name} alphabetically: foo/bar before foo/baz")
	assert.Equal(t, TargetKey{Group: GatewayGroup, Kind: "Gateway", Namespace: "foo", Name: "gw"}, foobar.Key(foobar.TargetRefs[0]))
}

func TestReasonIn(t *testing.T) {
	cases := map[string]string{
		`Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway"`:                           ReasonInvalidTargetRef,
		`Forbidden: RefNotPermitted: no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`: ReasonRefNotPermitted,
		`Required value: InvalidTargetRef`:                                            ReasonInvalidTargetRef,
		"Conflicted: ColorPolicy app/a on HTTPRoute app/r1 also sets atomic defaults": ReasonConflicted,
		`Invalid value: "Conflicted": must be a DNS label`:                            "",
		"spec.targetRefs: Required value":                                             "",
	}
	for cause, want := range cases {
		assert.Equal(t, want, ReasonIn(cause), cause)
	}
}
