package validation_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
	"github.com/stretchr/testify/require"
)

func TestValidateTargetRefs(t *testing.T) {
	table := kinds.BuiltinKindTable()
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"valid refs to a Gateway listener and a route rule": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: https}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: checkout}
  color: red`,
		},
		"group carrying a version, as in a GEP-713 sample": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io/v1, kind: Gateway, name: gw}]
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[0].group", validation.ReasonInvalidTargetRef,
				"must be a lowercase DNS subdomain without a version (for example `gateway.networking.k8s.io`), or empty for the core group")},
		},
		"kind the row does not allow lists the allowed kinds": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", validation.ReasonInvalidTargetRef,
				`supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`)},
		},
		"allowed kind in the wrong group names the group": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: "", kind: Gateway, name: gw}]
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].group", validation.ReasonInvalidTargetRef,
				`supported values: "gateway.networking.k8s.io"`)},
		},
		"missing kind and name, ill-formed kind": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io}
  - {group: gateway.networking.k8s.io, kind: "1Gateway", name: gw}
  color: red`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRefs[0].kind", validation.ReasonInvalidTargetRef, ""),
				rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRefs[0].name", validation.ReasonInvalidTargetRef, ""),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[1].kind", validation.ReasonInvalidTargetRef, "must start with a letter and contain only letters, digits and '-'"),
			},
		},
		"namespace and sectionName formats": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: Infra_1}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: "HTTPS!"}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: ""}
  color: red`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[0].namespace", validation.ReasonInvalidTargetRef, "must be a DNS label: lowercase alphanumerics and '-'"),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[1].sectionName", validation.ReasonInvalidTargetRef, "must be the name of a listener: lowercase alphanumerics, '-' and '.'"),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[2].sectionName", validation.ReasonInvalidTargetRef, "must not be empty; omit `sectionName` to target the whole object"),
			},
		},
		"name longer than 253": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ` + strings.Repeat("a", 254) + `}]
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeTooLong, "spec.targetRefs[0].name", validation.ReasonInvalidTargetRef, "may not be more than 253 bytes")},
		},
		"names no object can carry (uppercase, invalid UTF-8 decoded as U+FFFD)": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: Gateway_1}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: "g\uFFFD("}
  color: red`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[0].name", validation.ReasonInvalidTargetRef, "must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.'), as every object name is"),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[1].name", validation.ReasonInvalidTargetRef, "must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.'), as every object name is"),
			},
		},
		"a policy naming itself": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: policies.controller.io, kind: ColorPolicy, name: p}]
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", validation.ReasonInvalidTargetRef,
				`supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`)},
		},
		"targetRef and targetRefs both set": {
			policy: `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonInvalidTargetRef, "may not be set together with `targetRefs`; use `targetRefs` only")},
		},
		"targetRefs on a kind that has only targetRef": {
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  limits: {global: {rates: [{limit: 5, window: 10s}]}}`,
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs", validation.ReasonInvalidTargetRef, "not supported by RateLimitPolicy; use `targetRef`"),
				// The references of a field the kind does not have are not targets (its CRD
				// prunes the field, then requires targetRef).
				rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRef", validation.ReasonInvalidTargetRef, "a policy must target at least one object"),
			},
		},
		"no target at all": {
			policy: `
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: p, namespace: app}
spec:
  rules: {authentication: {anon: {anonymous: {}}}}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRef", validation.ReasonInvalidTargetRef, "a policy must target at least one object")},
		},
		"empty targetRefs list": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: []
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRefs", validation.ReasonInvalidTargetRef, "a policy must target at least one object")},
		},
		"targetRefs that is not a list": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: {group: "", kind: Service, name: b1}
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs", validation.ReasonInvalidTargetRef, "must be a list of references")},
		},
		"10,000 malformed refs: one error for the list, none per item": {
			policy: `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + strings.Repeat("\n  - {group: nope/v1, kind: '', name: ''}", 10000),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeTooMany, "spec.targetRefs", validation.ReasonInvalidTargetRef, "must have at most 16 items")},
		},
		"more than the allowed number of refs": {
			policy: `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:` + manyServiceRefs(17),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeTooMany, "spec.targetRefs", validation.ReasonInvalidTargetRef, "must have at most 16 items")},
		},
		"duplicate references": {
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, namespace: app}
  color: red`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeDuplicate, "spec.targetRefs[1]", validation.ReasonInvalidTargetRef, "same target as spec.targetRefs[0]")},
		},
		"BackendTLSPolicy: sectionName must be specified for two refs to one Service": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: b1, sectionName: https}
  - {group: "", kind: Service, name: b1}
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetRefs[1].sectionName", validation.ReasonInvalidTargetRef,
				"sectionName must be specified when targetRefs includes 2 or more references to the same target")},
		},
		"BackendTLSPolicy: sectionName must be unique for one Service": {
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: b1, sectionName: https}
  - {group: "", kind: Service, name: b1, sectionName: https}
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeDuplicate, "spec.targetRefs[1]", validation.ReasonInvalidTargetRef,
				"sectionName must be unique when targetRefs includes 2 or more references to the same target")},
		},
		"sectionName on a kind without sections": {
			policy: `
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: checkout}]
  tracing: {strategy: ratio}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0].sectionName", validation.ReasonInvalidTargetRef,
				"not supported when ObservabilityPolicy targets HTTPRoute; remove `sectionName` to target the whole object")},
		},
		"cross-namespace target on a kind that forbids it": {
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}
  limits: {global: {rates: [{limit: 5, window: 10s}]}}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef.namespace", validation.ReasonInvalidTargetRef,
				`RateLimitPolicy may only target objects in its own namespace "app"`)},
		},
		// Istio's CRDs (istio.io/api v1.32.0): targetRef(s).namespace carries the rule
		// self.size() == 0, "cross namespace referencing is not currently supported".
		"Istio policy naming its own namespace": {
			policy: `
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  - {group: "", kind: Service, name: b1, namespace: app}
  action: DENY
  rules: [{to: [{operation: {paths: [/admin]}}]}]`,
			want: field.ErrorList{&field.Error{
				Type:   field.ErrorTypeForbidden,
				Field:  "spec.targetRefs[1].namespace",
				Detail: "InvalidTargetRef: AuthorizationPolicy may name no namespace in a target reference, not even its own: its CRD's rule on the field is `self.size() == 0`; omit `namespace`",
				Origin: validation.ReasonInvalidTargetRef,
			}},
		},
		"Istio policy naming another namespace": {
			policy: `
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}
  accessLogging: [{providers: [{name: envoy}]}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef.namespace", validation.ReasonInvalidTargetRef,
				"Telemetry may name no namespace in a target reference, not even its own: its CRD's rule on the field is `self.size() == 0`; omit `namespace`")},
		},
		"Istio policy naming no namespace": {
			policy: `
apiVersion: extensions.istio.io/v1alpha1
kind: WasmPlugin
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  url: oci://example/filter:v1`,
		},
		"Istio policy naming the empty namespace": { // size 0: the CRD's rule accepts it
			policy: `
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: ""}]
  action: DENY
  rules: [{to: [{operation: {paths: [/admin]}}]}]`,
		},
		"namespaced policy targeting GatewayClass": {
			policy: `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: example}]
  retries: 3`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0].kind", validation.ReasonInvalidTargetRef,
				"a namespaced policy may not target cluster-scoped GatewayClass; GEP-713 requires a cluster-scoped policy kind for it")},
		},
	}
	retry, ok := kinds.DiscoveredRow("example.com", "RetryPolicy", kinds.Namespaced, "Inherited")
	if !ok {
		t.Fatal("discovered row")
	}
	if err := table.Put(retry); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateTargetRefs(rulestest.PolicyOf(t, table, tc.policy), index.New(), nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

func manyServiceRefs(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("\n  - {group: \"\", kind: Service, name: s" + strings.Repeat("x", i) + "}")
	}
	return b.String()
}

// Label-selector targets (Envoy Gateway's targetSelectors, and any kind known only from its
// label): a selector-only policy is not targetless; each selector is checked as a target
// kind and a label selector; a kind without the field refuses it.
func TestValidateTargetSelectors(t *testing.T) {
	table := kinds.BuiltinKindTable()
	row, ok := kinds.DiscoveredRow("example.com", "SelectPolicy", kinds.Namespaced, "Direct")
	require.True(t, ok)
	require.NoError(t, table.Put(row))
	policy := func(kind, spec string) string {
		group := map[string]string{"SelectPolicy": "example.com", "ColorPolicy": "policies.controller.io"}[kind]
		return `
apiVersion: ` + group + `/v1
kind: ` + kind + `
metadata: {name: p, namespace: app}
spec:
  ` + spec
	}
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"a selector-only policy is not targetless": {
			policy: policy("SelectPolicy", "targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]\n  retries: 3"),
		},
		"every part of a selector is checked": {
			policy: policy("SelectPolicy", `targetSelectors:
  - {kind: ConfigMap, matchLabels: {team: a}}
  - {group: gateway.networking.k8s.io, kind: Gateway, matchExpressions: [{key: team, operator: Sometimes}]}
  - {kind: HTTPRoute, matchLabels: {"bad key!": a}, namespaces: {from: Elsewhere}}
  - {matchLabels: {team: a}}
  - 7`),
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetSelectors[0].kind", validation.ReasonInvalidTargetRef,
					`supported values: "gateway.networking.k8s.io/GatewayClass", "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/ListenerSet", "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute", "gateway.networking.k8s.io/TLSRoute", "gateway.networking.k8s.io/TCPRoute", "gateway.networking.k8s.io/UDPRoute", "Service"`),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetSelectors[1].matchExpressions[0].operator", validation.ReasonInvalidTargetRef,
					`not a valid selector operator`),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetSelectors[2].matchLabels", validation.ReasonInvalidTargetRef,
					`name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
				rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetSelectors[2].namespaces.from", validation.ReasonInvalidTargetRef,
					`supported values: "Same", "All", "Selector"`),
				rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetSelectors[3].kind", validation.ReasonInvalidTargetRef, ""),
				rulestest.ReasonErr(field.ErrorTypeInvalid, "spec.targetSelectors[4]", validation.ReasonInvalidTargetRef,
					"must be an object with `kind` and `matchLabels` or `matchExpressions`"),
			},
		},
		"a kind without targetSelectors refuses them": {
			policy: policy("ColorPolicy", "targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]\n  color: red"),
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetSelectors", validation.ReasonInvalidTargetRef,
					"not supported by ColorPolicy; use `targetRefs`"),
				rulestest.ReasonErr(field.ErrorTypeRequired, "spec.targetRefs", validation.ReasonInvalidTargetRef,
					"a policy must target at least one object"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateTargetRefs(rulestest.PolicyOf(t, table, tc.policy), index.New(), nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}
