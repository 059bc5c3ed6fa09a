package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBuiltinKindTable(t *testing.T) {
	table := BuiltinKindTable()
	want := []string{
		"agentgateway.dev/AgentgatewayPolicy",
		"agentic.networking.x-k8s.io/XAccessPolicy",
		"aigateway.envoyproxy.io/BackendSecurityPolicy",
		"aigateway.envoyproxy.io/QuotaPolicy",
		"application-networking.k8s.aws/AccessLogPolicy",
		"application-networking.k8s.aws/IAMAuthPolicy",
		"application-networking.k8s.aws/TargetGroupPolicy",
		"application-networking.k8s.aws/VpcAssociationPolicy",
		"extensions.istio.io/TrafficExtension",
		"extensions.istio.io/WasmPlugin",
		"extensions.kuadrant.io/OIDCPolicy",
		"extensions.kuadrant.io/PlanPolicy",
		"extensions.kuadrant.io/TelemetryPolicy",
		"extensions.kuadrant.io/ThreatPolicy",
		"gateway.envoyproxy.io/BackendTrafficPolicy",
		"gateway.envoyproxy.io/ClientTrafficPolicy",
		"gateway.envoyproxy.io/EnvoyExtensionPolicy",
		"gateway.envoyproxy.io/EnvoyPatchPolicy",
		"gateway.envoyproxy.io/SecurityPolicy",
		"gateway.kgateway.dev/BackendConfigPolicy",
		"gateway.kgateway.dev/HTTPListenerPolicy",
		"gateway.kgateway.dev/ListenerPolicy",
		"gateway.kgateway.dev/TrafficPolicy",
		"gateway.networking.k8s.io/BackendTLSPolicy",
		"gateway.networking.x-k8s.io/XBackendTrafficPolicy",
		"gateway.networking.x-k8s.io/XTelemetryPolicy",
		"gateway.nginx.org/ClientSettingsPolicy",
		"gateway.nginx.org/ObservabilityPolicy",
		"gateway.nginx.org/PayloadProcessor",
		"gateway.nginx.org/ProxySettingsPolicy",
		"gateway.nginx.org/RateLimitPolicy",
		"gateway.nginx.org/SnippetsPolicy",
		"gateway.nginx.org/UpstreamSettingsPolicy",
		"gateway.nginx.org/WAFPolicy",
		"kuadrant.io/AuthPolicy",
		"kuadrant.io/DNSPolicy",
		"kuadrant.io/RateLimitPolicy",
		"kuadrant.io/TLSPolicy",
		"kuadrant.io/TokenRateLimitPolicy",
		"networking.gke.io/GCPBackendPolicy",
		"networking.gke.io/GCPGatewayPolicy",
		"networking.gke.io/GCPTrafficDistributionPolicy",
		"networking.gke.io/HealthCheckPolicy",
		"networking.istio.io/EnvoyFilter",
		"policies.controller.io/ColorPolicy",
		"policy.linkerd.io/AuthorizationPolicy",
		"policy.linkerd.io/HTTPLocalRateLimitPolicy",
		"security.istio.io/AuthorizationPolicy",
		"security.istio.io/RequestAuthentication",
		"telemetry.istio.io/Telemetry",
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
	// Gateway API v1.7.0 (GEP-5075): a ClusterTrustBundle CA is cluster-scoped, so it needs
	// no ReferenceGrant and no warning.
	assert.Equal(t, []Reference{{
		Shape: ObjectReferenceShape, Path: "validation.caCertificateRefs[]",
		Kinds:                            []string{"ConfigMap", "Secret", "ClusterTrustBundle"},
		ClusterScopedKinds:               []string{"ClusterTrustBundle"},
		OtherKindsImplementationSpecific: true,
	}}, btls.References)

	// Gateway API v1.7.0's TelemetryPolicy: one per Gateway, the oldest wins.
	telemetry := mustRow(t, table, "gateway.networking.x-k8s.io", "XTelemetryPolicy")
	assert.Equal(t, Direct, telemetry.Class)
	assert.Equal(t, []string{"v1alpha1"}, telemetry.Versions)
	assert.Equal(t, []string{"targetRefs"}, telemetry.TargetRefFields)
	assert.Equal(t, 16, telemetry.MaxTargetRefs)
	assert.True(t, telemetry.OtherTargetsImplementationSpecific)
	assert.Equal(t, []TargetKind{{Group: "gateway.networking.k8s.io", Kind: "Gateway"}}, telemetry.Targets)
	assert.Equal(t, "Gateway", telemetry.EffectiveTarget)
	assert.Equal(t, Conflicts{Mode: ConflictsNone}, telemetry.Conflicts)
	assert.Equal(t, OrderOldestWins, telemetry.Order)
	assert.Equal(t, []Reference{{
		Shape: ObjectReferenceShape, Path: "tracing.provider.backendRef", DefaultKind: "Service",
		Kinds: []string{"Service"}, OtherKindsImplementationSpecific: true, Namespaced: true,
	}}, telemetry.References)

	// Any implementation-specific backendRef may be a target (apisx/v1alpha1, v1.6.3 and
	// v1.7.0): warned about, not denied.
	assert.True(t, mustRow(t, table, "gateway.networking.x-k8s.io", "XBackendTrafficPolicy").OtherTargetsImplementationSpecific)

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
		"a row with a per-field target rule": {
			config: `
kinds:
- group: policies.controller.io
  kind: ColorPolicy
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}, {group: gateway.networking.k8s.io, kind: HTTPRoute}]
  fieldTargets: [{field: rewrite.host, targetKinds: [HTTPRoute]}]`,
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
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: class "Sometimes" must be Direct or Inherited; strategy value "x" maps to "sideways"; must be atomic, patch or merge; target Gateway section "Port" must be Listener, RouteRule, ServicePort or SubBackend`,
		},
		"effectiveTarget typo": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Inherited
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  effectiveTarget: RouteRules`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: effectiveTarget "RouteRules" must be one of Backend, GRPCRoute, Gateway, HTTPRoute, Listener, Route, RouteRule, Service, ServiceImport, ServicePort`,
		},
		"target kind typo, fromNamespace on a namespaced kind, strategy target not a target": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Inherited
  targets: [{group: gateway.networking.k8s.io, kind: HTTPRoutes}, {group: gateway.networking.k8s.io, kind: Gateway, fromNamespace: true}]
  strategy: {field: mergeType, values: {Merge: patch}, targetKinds: [GRPCRoute]}`,
			wantErr: "cfg.yaml: kinds[0]: kind a.io/P: target gateway.networking.k8s.io/HTTPRoutes is not a kind the webhook can resolve (" + knownTargetNames() +
				"); target Gateway is namespaced: fromNamespace applies to cluster-scoped kinds; strategy.targetKinds \"GRPCRoute\" is not one of the row's targets",
		},
		"fieldTargets: a target field, the strategy field, twice, no kinds, a kind not a target, no path": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Inherited
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}, {group: gateway.networking.k8s.io, kind: HTTPRoute}]
  strategy: {field: mergeType, values: {Merge: patch}}
  fieldTargets:
  - {field: targetRefs, targetKinds: [Gateway]}
  - {field: mergeType, targetKinds: [HTTPRoute]}
  - {field: rewrite.host, targetKinds: [HTTPRoute]}
  - {field: rewrite.host, targetKinds: []}
  - {field: tracing, targetKinds: [GRPCRoute]}
  - {field: "a..b", targetKinds: [Gateway]}`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: fieldTargets field "targetRefs" is a target field; fieldTargets field "mergeType" is the strategy field: use strategy.targetKinds; ` +
				`fieldTargets field "rewrite.host" is listed twice; fieldTargets "rewrite.host" must list at least one target kind; fieldTargets "tracing" kind "GRPCRoute" is not one of the row's targets; ` +
				`fieldTargets field "a..b" must be a dotted path below spec`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := BuiltinKindTable()
			err := table.Load([]byte(tc.config), "cfg.yaml")
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Len(t, table.Rows(), len(BuiltinKindTable().Rows()), "a bad file adds nothing")
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

func mustRow(t testing.TB, table *KindTable, group, kind string) *KindRow {
	t.Helper()
	row, ok := table.Lookup(schema.GroupKind{Group: group, Kind: kind})
	require.True(t, ok, "no row for %s/%s", group, kind)
	return row
}

func TestRowFromCRD(t *testing.T) {
	crd := func(labels map[string]any, scope string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "ps.a.io", "labels": labels},
			"spec": map[string]any{"group": "a.io", "scope": scope, "names": map[string]any{"kind": "P"},
				"versions": []any{map[string]any{"name": "v1alpha1"}, map[string]any{"name": "v1", "storage": true}}},
		}
	}
	got, labelled, err := RowFromCRD(crd(map[string]any{PolicyLabel: "Direct"}, "Cluster"))
	require.NoError(t, err)
	assert.True(t, labelled)
	want, _ := DiscoveredRow("a.io", "P", Cluster, "Direct")
	want.Versions = []string{"v1alpha1", "v1"}
	assert.Equal(t, CRDRow{Row: want, StoredVersion: "v1"}, got)

	_, labelled, err = RowFromCRD(crd(map[string]any{"app": "x"}, "Namespaced"))
	assert.False(t, labelled)
	assert.NoError(t, err)

	_, labelled, err = RowFromCRD(crd(map[string]any{PolicyLabel: "sometimes"}, "Namespaced"))
	assert.True(t, labelled)
	assert.EqualError(t, err, `label gateway.networking.k8s.io/policy="sometimes" names no policy class; use Direct, Inherited or true`)
}

// A per-field target rule loads from a config file, and FieldTargetKinds reads it and the
// strategy field's rule alike.
func TestFieldTargetKinds(t *testing.T) {
	table := BuiltinKindTable()
	require.NoError(t, table.Load([]byte(`
kinds:
- group: a.io
  kind: P
  class: Inherited
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}, {group: gateway.networking.k8s.io, kind: HTTPRoute}]
  strategy: {field: mergeType, values: {Merge: patch}, targetKinds: [HTTPRoute]}
  fieldTargets: [{field: rewrite.host, targetKinds: [HTTPRoute, Gateway]}]`), "cfg.yaml"))
	row := mustRow(t, table, "a.io", "P")
	assert.Equal(t, []FieldTarget{{Field: "rewrite.host", TargetKinds: []string{"HTTPRoute", "Gateway"}}}, row.FieldTargets)
	cases := map[string]struct {
		field string
		want  []string
		ok    bool
	}{
		"a fieldTargets entry": {field: "rewrite.host", want: []string{"HTTPRoute", "Gateway"}, ok: true},
		"the strategy field":   {field: "mergeType", want: []string{"HTTPRoute"}, ok: true},
		"another field":        {field: "rewrite"},
		"no field":             {field: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := row.FieldTargetKinds(tc.field)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.ok, ok)
		})
	}
}
