package validation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// refsOf lists n targetRefs of one kind, each to its own object.
func refsOf(n int, group, kind string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\n  - {group: %q, kind: %s, name: t%d}", group, kind, i)
	}
	return b.String()
}

// The limit on targetRefs is each kind's CRD's maxItems, and none where its CRD sets none
// (Envoy Gateway's); a limit copied from one project onto another denies what the
// implementation accepts.
func TestTargetRefLimitIsTheCRDs(t *testing.T) {
	table := kinds.BuiltinKindTable()
	tooMany := field.ErrorList{rulestest.ReasonErr(field.ErrorTypeTooMany, "spec.targetRefs", validation.ReasonInvalidTargetRef,
		"must have at most 16 items")}
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"Envoy Gateway BackendTrafficPolicy, 17 routes: its CRD sets no maxItems": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "gateway.networking.k8s.io", "HTTPRoute"),
		},
		"Envoy Gateway ClientTrafficPolicy, 300 Gateways: its CRD sets no maxItems": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(300, "gateway.networking.k8s.io", "Gateway"),
		},
		"ColorPolicy, 17 routes: GEP-713 sets no limit": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "gateway.networking.k8s.io", "HTTPRoute") + `
  color: red`,
		},
		"Istio AuthorizationPolicy, 17 Services: its CRD's maxItems is 16": {
			policy: `
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "", "Service"),
			want: tooMany,
		},
		"NGINX Gateway Fabric SnippetsPolicy, 17 Gateways: its CRD's maxItems is 16": {
			policy: `
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "gateway.networking.k8s.io", "Gateway"),
			want: tooMany,
		},
		"kgateway TrafficPolicy, 17 routes: its CRD's maxItems is 16": {
			policy: `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "gateway.networking.k8s.io", "HTTPRoute"),
			want: tooMany,
		},
		"agentgateway AgentgatewayPolicy, 17 routes: its CRD's maxItems is 16": {
			policy: `
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + refsOf(17, "gateway.networking.k8s.io", "HTTPRoute"),
			want: tooMany,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateTargetRefs(rulestest.PolicyOf(t, table, tc.policy), index.New(), nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Target kinds, reference kinds and group spellings the implementation accepts are not
// denied; those the spec leaves to implementations are warnings that say so.
func TestImplementationSpecificKindsAreWarnings(t *testing.T) {
	table := kinds.BuiltinKindTable()
	cases := map[string]struct {
		policy   string
		want     field.ErrorList
		warnings []string
	}{
		"BackendTLSPolicy on a ServiceImport (Envoy Gateway supports it)": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: multicluster.x-k8s.io, kind: ServiceImport, name: service-import-1, sectionName: http}
  - {group: multicluster.x-k8s.io, kind: ServiceImport, name: service-import-1, sectionName: grpc}
  validation: {hostname: example.com, wellKnownCACertificates: System}`,
			warnings: []string{
				"ImplementationSpecific: spec.targetRefs[0].kind: every implementation of BackendTLSPolicy supports Service; multicluster.x-k8s.io/ServiceImport is implementation-specific, so the policy takes effect only where yours supports it",
				"ImplementationSpecific: spec.targetRefs[1].kind: every implementation of BackendTLSPolicy supports Service; multicluster.x-k8s.io/ServiceImport is implementation-specific, so the policy takes effect only where yours supports it",
			},
		},
		"BackendTLSPolicy on a ServiceImport still follows the CRD's sectionName rules": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: multicluster.x-k8s.io, kind: ServiceImport, name: si, sectionName: http}
  - {group: multicluster.x-k8s.io, kind: ServiceImport, name: si}
  validation: {hostname: example.com, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[1].sectionName", validation.ReasonInvalidTargetRef,
				"sectionName must be specified when targetRefs includes 2 or more references to the same target")},
			warnings: []string{
				"ImplementationSpecific: spec.targetRefs[0].kind: every implementation of BackendTLSPolicy supports Service; multicluster.x-k8s.io/ServiceImport is implementation-specific, so the policy takes effect only where yours supports it",
				"ImplementationSpecific: spec.targetRefs[1].kind: every implementation of BackendTLSPolicy supports Service; multicluster.x-k8s.io/ServiceImport is implementation-specific, so the policy takes effect only where yours supports it",
			},
		},
		// Gateway API v1.7.0 (GEP-5075): a ClusterTrustBundle CA has Extended support and is
		// cluster-scoped; Envoy Gateway v1.9.1 reads it whatever its group.
		"BackendTLSPolicy CA of kind ClusterTrustBundle": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: backends}
spec:
  targetRefs: [{group: "", kind: Service, name: http-backend, sectionName: http}]
  validation:
    caCertificateRefs:
    - {name: ca-cluster-trust-bundle, group: certificates.k8s.io, kind: ClusterTrustBundle}
    - {name: ca-cluster-trust-bundle, group: "", kind: ClusterTrustBundle}
    hostname: example.com`,
		},
		"BackendTLSPolicy CA of another kind": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: backends}
spec:
  targetRefs: [{group: "", kind: Service, name: http-backend}]
  validation:
    caCertificateRefs: [{name: invalid-kind, group: invalid.io, kind: InvalidKind}]
    hostname: abc.example.com`,
			warnings: []string{
				"ImplementationSpecific: spec.validation.caCertificateRefs[0].kind: InvalidKind is not one of the kinds checked here (ConfigMap, Secret, ClusterTrustBundle) but is left to implementations, so the reference resolves only where yours supports it",
			},
		},
		// apisx/v1alpha1/xbackendtrafficpolicy_types.go (v1.6.3, v1.7.0): "Service,
		// ServiceImport, or any implementation-specific backendRef"; its CRD has no rule on
		// target kinds.
		"XBackendTrafficPolicy on an XBackend and an InferencePool": {
			policy: `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.x-k8s.io, kind: XBackend, name: external}
  - {group: inference.networking.k8s.io, kind: InferencePool, name: pool}
  - {group: "", kind: Service, name: svc}
  retryConstraint: {budget: {percent: 20, interval: 10s}}`,
			warnings: []string{
				"ImplementationSpecific: spec.targetRefs[0].kind: every implementation of XBackendTrafficPolicy supports Service, multicluster.x-k8s.io/ServiceImport; gateway.networking.x-k8s.io/XBackend is implementation-specific, so the policy takes effect only where yours supports it",
				"ImplementationSpecific: spec.targetRefs[1].kind: every implementation of XBackendTrafficPolicy supports Service, multicluster.x-k8s.io/ServiceImport; inference.networking.k8s.io/InferencePool is implementation-specific, so the policy takes effect only where yours supports it",
			},
		},
		// apisx/v1alpha1/xtelemetrypolicy_types.go (v1.7.0): "Support: Core for Gateway"; no
		// rule refuses another target kind. Its exporter: Core for a Service, any other kind
		// implementation-specific.
		"XTelemetryPolicy on a ListenerSet, exporting to an XBackend": {
			policy: `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XTelemetryPolicy
metadata: {name: p, namespace: infra}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  - {group: gateway.networking.k8s.io, kind: ListenerSet, name: team-a}
  tracing:
    mode: Enabled
    provider: {backendRef: {group: gateway.networking.x-k8s.io, kind: XBackend, name: collector}}`,
			warnings: []string{
				"ImplementationSpecific: spec.targetRefs[1].kind: every implementation of XTelemetryPolicy supports gateway.networking.k8s.io/Gateway; gateway.networking.k8s.io/ListenerSet is implementation-specific, so the policy takes effect only where yours supports it",
				"ImplementationSpecific: spec.tracing.provider.backendRef.kind: XBackend is not one of the kinds checked here (Service) but is left to implementations, so the reference resolves only where yours supports it",
			},
		},
		"kgateway TrafficPolicy on a GRPCRoute rule": {
			policy: `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: GRPCRoute, name: grpc, sectionName: rule-a}]
  timeouts: {request: 5s}`,
		},
		"NGINX Gateway Fabric UpstreamSettingsPolicy with group core": {
			policy: `
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: usp, namespace: default}
spec:
  targetRefs: [{group: core, kind: Service, name: svc}]
  zoneSize: 1k`,
		},
		"a kind outside a row without the flag is still denied": {
			policy: `
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: usp, namespace: default}
spec:
  targetRefs: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: svc}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", validation.ReasonInvalidTargetRef,
				`supported values: "Service"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, tc.policy)
			got := append(validation.ValidateTargetRefs(p, index.New(), nil), validation.ValidateReferences(p, index.New(), nil)...)
			rulestest.Matcher.Test(t, tc.want, got)
			assert.Equal(t, tc.warnings, validation.WarnImplementationSpecific(p))
		})
	}
}

// NGINX Gateway Fabric reads group "core" as the core group, so a reference spelled so
// finds its Service: here as there, it is the same target as one spelled "".
func TestCoreGroupAliasIsTheCoreGroup(t *testing.T) {
	table := kinds.BuiltinKindTable()
	p := rulestest.PolicyOf(t, table, `
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: usp, namespace: default}
spec:
  targetRefs: [{group: core, kind: Service, name: svc}]`)
	assert.Equal(t, "", p.Key(p.TargetRefs[0]).Group)
	// Other kinds keep the group as written: Gateway API's own has no such alias.
	q := rulestest.PolicyOf(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: default}
spec:
  targetRefs: [{group: core, kind: Service, name: svc}]`)
	assert.Equal(t, "core", q.Key(q.TargetRefs[0]).Group)
}
