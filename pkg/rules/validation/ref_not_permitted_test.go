package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func TestValidateReferenceGrants(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const crossNamespaceColor = `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  color: red`
	grant := func(apiVersion, fromNS, toName string) string {
		g := `
apiVersion: ` + apiVersion + `
kind: ReferenceGrant
metadata: {name: g, namespace: infra}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: ` + fromNS + `}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway`
		if toName != "" {
			g += `, name: ` + toName
		}
		return g + `}]`
	}
	denied := field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0].namespace", validation.ReasonRefNotPermitted,
		`no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`)}

	cases := map[string]struct {
		policy string
		world  []string
		want   field.ErrorList
	}{
		"no grant":                         {policy: crossNamespaceColor, want: denied},
		"v1 grant for every Gateway":       {policy: crossNamespaceColor, world: []string{grant("gateway.networking.k8s.io/v1", "app", "")}},
		"v1beta1 grant naming the Gateway": {policy: crossNamespaceColor, world: []string{grant("gateway.networking.k8s.io/v1beta1", "app", "gw")}},
		"grant naming another Gateway":     {policy: crossNamespaceColor, world: []string{grant("gateway.networking.k8s.io/v1", "app", "other")}, want: denied},
		"grant from another namespace":     {policy: crossNamespaceColor, world: []string{grant("gateway.networking.k8s.io/v1", "web", "")}, want: denied},
		// ReferenceGrant has no wildcards (GEP-709): "*" and "" are literal values that
		// match nothing, however they look.
		"wildcard-looking grant": {
			policy: crossNamespaceColor,
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: g, namespace: infra}
spec:
  from:
  - {group: "*", kind: "*", namespace: "*"}
  - {group: policies.controller.io, kind: ColorPolicy, namespace: "*"}
  - {group: policies.controller.io, kind: "*", namespace: app}
  - {group: "", kind: ColorPolicy, namespace: app}
  to:
  - {group: "*", kind: "*", name: "*"}
  - {group: gateway.networking.k8s.io, kind: "*"}`},
			want: denied,
		},
		"grant whose to names another object with a glob": {
			policy: crossNamespaceColor,
			world:  []string{grant("gateway.networking.k8s.io/v1", "app", `"g*"`)},
			want:   denied,
		},
		"grant for another policy kind": {
			policy: crossNamespaceColor,
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: g, namespace: infra}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`},
			want: denied,
		},
		"grant in the policy's namespace instead of the referent's": {
			policy: crossNamespaceColor,
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: g, namespace: app}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: app}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`},
			want: denied,
		},
		"same-namespace target needs no grant": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  color: red`,
		},
		"cross-namespace Secret in a SecurityPolicy": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: basic, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  basicAuth:
    users: {name: htpasswd, namespace: secrets}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.basicAuth.users.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "secrets" lets SecurityPolicy from namespace "app" reference Secret "htpasswd"`)},
		},
		"cross-namespace Secret with a grant": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: basic, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  basicAuth:
    users: {name: htpasswd, namespace: secrets}`,
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: secrets}
spec:
  from: [{group: gateway.envoyproxy.io, kind: SecurityPolicy, namespace: app}]
  to: [{group: "", kind: Secret, name: htpasswd}]`},
		},
		// Envoy Gateway v1.9.1 validateExtServiceBackendReference: "backend ref to Service
		// auth/jwks not permitted by any ReferenceGrant" leaves the policy not Accepted.
		"cross-namespace remoteJWKS backend": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: jwt, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  jwt:
    providers:
    - name: example
      remoteJWKS:
        uri: https://jwks.auth/keys
        backendRefs: [{name: jwks, namespace: auth, port: 443}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.jwt.providers[0].remoteJWKS.backendRefs[0].namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "auth" lets SecurityPolicy from namespace "app" reference Service "jwks"`)},
		},
		"cross-namespace extProc Backend with a grant": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: ext, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  extProc:
  - backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: proc, namespace: ext}]`,
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: ext}
spec:
  from: [{group: gateway.envoyproxy.io, kind: EnvoyExtensionPolicy, namespace: app}]
  to: [{group: gateway.envoyproxy.io, kind: Backend}]`},
		},
		// envoyextensionpolicy.go -> validateAndGetDataAtKeyInRef: a Secret or ConfigMap CA
		// across namespaces needs a grant; a ClusterTrustBundle lives in none.
		"cross-namespace Wasm CA": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: wasm, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  wasm:
  - code:
      type: HTTP
      http:
        url: https://wasm.example/filter.wasm
        tls: {caCertificateRef: {name: ca, namespace: certs}}
  - code:
      type: Image
      image:
        url: oci://wasm.example/filter:v1
        tls: {caCertificateRef: {group: certificates.k8s.io, kind: ClusterTrustBundle, name: ca}}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.wasm[0].code.http.tls.caCertificateRef.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "certs" lets EnvoyExtensionPolicy from namespace "app" reference Secret "ca"`)},
		},
		// Gateway API v1.7.0 apisx/v1alpha1/xtelemetrypolicy_types.go: "Cross-namespace
		// references are only valid if they are explicitly allowed by ReferenceGrant in the
		// target namespace".
		"XTelemetryPolicy exporter in another namespace, no grant": {
			policy: xTelemetryTo("observability"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.tracing.provider.backendRef.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "observability" lets XTelemetryPolicy from namespace "infra" reference Service "otel-collector"`)},
		},
		"XTelemetryPolicy exporter in another namespace, granted": {
			policy: xTelemetryTo("observability"),
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: observability}
spec:
  from: [{group: gateway.networking.x-k8s.io, kind: XTelemetryPolicy, namespace: infra}]
  to: [{group: "", kind: Service}]`},
		},
		"XTelemetryPolicy exporter in its own namespace": {policy: xTelemetryTo("infra")},
		// Gateway API v1.7.0 (GEP-5075): "A ReferenceGrant is not required because
		// ClusterTrustBundle is cluster-scoped and has no target namespace."
		"BackendTLSPolicy CA in a ClusterTrustBundle needs no grant": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  validation:
    hostname: b1.app
    caCertificateRefs: [{group: certificates.k8s.io, kind: ClusterTrustBundle, name: platform-ca}]`,
		},
		"ClusterIssuer needs no grant": {
			policy: `
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: tls, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, tc.world...)
			got := validation.ValidateReferenceGrants(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// xTelemetryTo is an XTelemetryPolicy in namespace infra exporting traces to a Service in
// namespace ns.
func xTelemetryTo(ns string) string {
	return `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XTelemetryPolicy
metadata: {name: tracing, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  tracing:
    mode: Enabled
    provider:
      backendRef: {name: otel-collector, namespace: ` + ns + `, port: 4317}`
}

func TestValidateReferences(t *testing.T) {
	table := kinds.BuiltinKindTable()
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"cert-manager Issuer defaults to kind Issuer": {
			policy: `
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: tls, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  issuerRef: {name: ca}`,
		},
		"issuerRef to a kind cert-manager does not issue with": {
			policy: `
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: tls, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  issuerRef: {name: ca, kind: Certificate}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.issuerRef.kind", validation.ReasonInvalidTargetRef, `supported values: "Issuer", "ClusterIssuer"`)},
		},
		"issuerRef without a name": {
			policy: `
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: tls, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  issuerRef: {kind: ClusterIssuer}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeRequired, "spec.issuerRef.name", validation.ReasonInvalidTargetRef, "")},
		},
		"BackendTLSPolicy CA refs are local; another kind is implementation-specific, not denied": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  validation:
    hostname: b1.app
    caCertificateRefs:
    - {group: "", kind: ConfigMap, name: ca}
    - {group: "", kind: Service, name: ca, namespace: other}`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.validation.caCertificateRefs[1].namespace", validation.ReasonInvalidTargetRef, "must refer to an object in the policy's own namespace"),
			},
		},
		// Envoy Gateway v1.9.1 validateExtServiceBackendReference: "only Service ...,
		// ServiceImport, and Backend are supported".
		"extProc backend of a kind Envoy Gateway does not call": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: ext, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  extProc:
  - backendRefs: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: a, port: 9000}, {group: "", kind: Pod, name: b, port: 9000}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.extProc[0].backendRefs[1].kind", validation.ReasonInvalidTargetRef, `supported values: "Service", "ServiceImport", "Backend"`)},
		},
		"reference that is not an object": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  apiKeyAuth:
    credentialRefs: [keys]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.apiKeyAuth.credentialRefs[0]", validation.ReasonInvalidTargetRef, "must be an object reference")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateReferences(rulestest.PolicyOf(t, table, tc.policy), index.New(), nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}
