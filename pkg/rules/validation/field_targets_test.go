package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// A field the row ties to some target kinds (fieldTargets) may be set only on a policy whose
// every target, by reference or by selector, is one of them: Envoy Gateway's
// BackendTrafficPolicy admissionControl (backendtrafficpolicy_types.go at v1.9.1) and
// kgateway's TrafficPolicy autoHostRewrite, urlRewrite and tracing
// (traffic_policy_types.go, sheidkamp/kgateway 1f3a3eaf), as their CRDs' CEL rules say.
func TestFieldTargets(t *testing.T) {
	table := kinds.BuiltinKindTable()
	btp := func(spec string) string {
		return "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\nmetadata: {name: p, namespace: app}\nspec:\n  " + spec
	}
	tp := func(spec string) string {
		return "apiVersion: gateway.kgateway.dev/v1alpha1\nkind: TrafficPolicy\nmetadata: {name: p, namespace: app}\nspec:\n  " + spec
	}
	agw := func(spec string) string {
		return "apiVersion: agentgateway.dev/v1alpha1\nkind: AgentgatewayPolicy\nmetadata: {name: p, namespace: app}\nspec:\n  " + spec
	}
	const admission = "may be set only when every target is one of Gateway, ListenerSet, HTTPRoute, GRPCRoute; this policy targets a "
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"admissionControl on a Gateway": {
			policy: btp("targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  admissionControl: {successRateThreshold: 0.9}"),
		},
		"admissionControl on a GRPCRoute and a ListenerSet": {
			policy: btp("targetRefs: [{group: gateway.networking.k8s.io, kind: GRPCRoute, name: g}, {group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}]\n  admissionControl: {}"),
		},
		"admissionControl on a TCPRoute by targetRef": {
			policy: btp("targetRef: {group: gateway.networking.k8s.io, kind: TCPRoute, name: t}\n  admissionControl: {}"),
			want:   field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.admissionControl", validation.ReasonInvalidTargetRef, admission+"TCPRoute")},
		},
		"admissionControl on an HTTPRoute and a UDPRoute: the first outside is named": {
			policy: btp("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}, {group: gateway.networking.k8s.io, kind: UDPRoute, name: u}, {group: gateway.networking.k8s.io, kind: TLSRoute, name: t}]\n  admissionControl: {}"),
			want:   field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.admissionControl", validation.ReasonInvalidTargetRef, admission+"UDPRoute")},
		},
		"admissionControl by a TLSRoute selector": {
			policy: btp("targetSelectors: [{kind: TLSRoute, matchLabels: {team: a}}]\n  admissionControl: {}"),
			want:   field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.admissionControl", validation.ReasonInvalidTargetRef, admission+"TLSRoute")},
		},
		"admissionControl null is not set": {
			policy: btp("targetRefs: [{group: gateway.networking.k8s.io, kind: TCPRoute, name: t}]\n  admissionControl: null"),
		},
		"no admissionControl on a TCPRoute": {
			policy: btp("targetRefs: [{group: gateway.networking.k8s.io, kind: TCPRoute, name: t}]\n  timeout: {tcp: {connectTimeout: 1s}}"),
		},
		"autoHostRewrite on an HTTPRoute": {
			policy: tp("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\n  autoHostRewrite: true"),
		},
		"autoHostRewrite on a Gateway": {
			policy: tp("targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  autoHostRewrite: true"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.autoHostRewrite", validation.ReasonInvalidTargetRef,
				"may be set only when every target is one of HTTPRoute; this policy targets a Gateway")},
		},
		"autoHostRewrite false is set too": {
			policy: tp("targetSelectors: [{group: gateway.networking.k8s.io, kind: GRPCRoute, matchLabels: {a: b}}]\n  autoHostRewrite: false"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.autoHostRewrite", validation.ReasonInvalidTargetRef,
				"may be set only when every target is one of HTTPRoute; this policy targets a GRPCRoute")},
		},
		"three fields on a GRPCRoute: tracing admitted, the two HTTPRoute-only fields not": {
			policy: tp("targetRefs: [{group: gateway.networking.k8s.io, kind: GRPCRoute, name: g}]\n  autoHostRewrite: true\n  urlRewrite: {pathRegex: {pattern: a, substitution: b}}\n  tracing: {}"),
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.autoHostRewrite", validation.ReasonInvalidTargetRef, "may be set only when every target is one of HTTPRoute; this policy targets a GRPCRoute"),
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.urlRewrite", validation.ReasonInvalidTargetRef, "may be set only when every target is one of HTTPRoute; this policy targets a GRPCRoute"),
			},
		},
		"agentgateway: traffic on a Service, frontend on an HTTPRoute (agentgateway_policy CRD at 75b4e6ce)": {
			policy: agw("targetRefs: [{group: \"\", kind: Service, name: s}]\n  traffic: {timeouts: {request: 1s}}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.traffic", validation.ReasonInvalidTargetRef,
				"may be set only when every target is one of Gateway, ListenerSet, HTTPRoute, GRPCRoute, InferencePool; this policy targets a Service")},
		},
		"agentgateway: frontend by an HTTPRoute selector": {
			policy: agw("targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {a: b}}]\n  frontend: {tcp: {}}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.frontend", validation.ReasonInvalidTargetRef,
				"may be set only when every target is one of Gateway; this policy targets a HTTPRoute")},
		},
		"agentgateway: frontend on a Gateway": {
			policy: agw("targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  frontend: {tcp: {}}"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, tc.policy)
			rulestest.Matcher.Test(t, tc.want, validation.ValidateTargetRefs(p, index.New(), nil))
		})
	}
}

// A dotted fieldTargets path is looked up below spec, and the error is on that path.
func TestFieldTargetsDottedPath(t *testing.T) {
	table := kinds.BuiltinKindTable()
	if err := table.Load([]byte(`
kinds:
- group: a.io
  kind: P
  class: Inherited
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}, {group: gateway.networking.k8s.io, kind: HTTPRoute}]
  fieldTargets: [{field: rewrite.host, targetKinds: [HTTPRoute]}]`), "cfg.yaml"); err != nil {
		t.Fatal(err)
	}
	doc := func(spec string) string {
		return "apiVersion: a.io/v1\nkind: P\nmetadata: {name: p, namespace: app}\nspec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  " + spec
	}
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"the path set": {policy: doc("rewrite: {host: true}"), want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.rewrite.host",
			validation.ReasonInvalidTargetRef, "may be set only when every target is one of HTTPRoute; this policy targets a Gateway")}},
		"its parent only":             {policy: doc("rewrite: {path: /}")},
		"its parent not a map":        {policy: doc("rewrite: yes")},
		"another field the same name": {policy: doc("host: true")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, tc.policy)
			rulestest.Matcher.Test(t, tc.want, validation.ValidateTargetRefs(p, index.New(), nil))
		})
	}
}
