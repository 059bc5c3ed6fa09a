package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// kgateway's selectors carry a sectionName (api/v1alpha1 LocalPolicyTargetSelectorWithSectionName):
// a selected object without that section gets the SectionNotFound warning a reference naming
// it gets.
func TestSelectorSectionNotFound(t *testing.T) {
	table := kinds.BuiltinKindTable()
	gateway := func(name, team, listener string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ` + name + `, namespace: app, labels: {team: ` + team + `}}
spec:
  gatewayClassName: example
  listeners: [{name: ` + listener + `, protocol: HTTP, port: 80}]
---`
	}
	snap := rulestest.World(t, table,
		gateway("one", "a", "http")+gateway("two", "b", "https")+gateway("three", "b", "grpc")+gateway("four", "c", "http")+`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app, labels: {team: a}}
spec:
  parentRefs: [{name: one}]
  rules: [{name: checkout, backendRefs: [{name: b1, port: 80}]}]`)
	cases := map[string]struct {
		selectors string
		want      []string
	}{
		"every selected Gateway has the listener": {
			selectors: `[{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {team: a}, sectionName: http}]`,
		},
		"no sectionName": {
			selectors: `[{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {team: b}}]`,
		},
		"one selected Gateway without the listener": {
			selectors: `[{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {team: a}, sectionName: https}]`,
			want:      []string{`SectionNotFound: spec.targetSelectors[0].sectionName: Gateway app/one has no listener named "https"; the policy takes effect once it does`},
		},
		"several selected Gateways without the listener": {
			selectors: `[{group: gateway.networking.k8s.io, kind: Gateway, matchExpressions: [{key: team, operator: Exists}], sectionName: https}]`,
			want:      []string{`SectionNotFound: spec.targetSelectors[0].sectionName: 3 selected Gateways (app/four, app/one, app/three) have no listener named "https"; the policy takes effect on each once it does`},
		},
		"a selected route without the rule": {
			selectors: `[{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {team: a}, sectionName: payment}]`,
			want:      []string{`SectionNotFound: spec.targetSelectors[0].sectionName: HTTPRoute app/r1 has no route rule named "payment"; the policy takes effect once it does`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: p, namespace: app}
spec:
  targetSelectors: `+tc.selectors+`
  timeouts: {request: 10s}`)
			assert.Equal(t, tc.want, validation.WarnMissingTargets(p, snap))
		})
	}
}

// A selector's sectionName counts only where the kind's selectors have one (the row's
// selectorSectionName): kgateway's TrafficPolicy and ListenerPolicy (since e30e6459) and
// agentgateway's AgentgatewayPolicy (LocalPolicyTargetSelectorWithSectionName). Envoy Gateway's TargetSelector
// (api/v1alpha1/policy_helpers.go at v1.9.1) and kgateway's LocalPolicyTargetSelector have
// none: the implementation selects whole objects, and so does the webhook, with a warning.
func TestSelectorSectionNameIsTheKinds(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: one, namespace: app, labels: {team: a}}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]`)
	const selector = `[{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {team: a}, sectionName: https}]`
	cases := map[string]struct {
		apiVersion, kind, body string
		wantSection            string
		wantIgnored            bool
		want                   []string
	}{
		"Envoy Gateway BackendTrafficPolicy: ignored, the whole Gateway": {
			apiVersion: "gateway.envoyproxy.io/v1alpha1", kind: "BackendTrafficPolicy", body: `timeout: {tcp: {connectTimeout: 10s}}`,
			wantIgnored: true,
			want:        []string{`FieldIgnored: spec.targetSelectors[0].sectionName: ignored: BackendTrafficPolicy's targetSelectors have no sectionName, so the selector targets each selected Gateway whole`},
		},
		"kgateway HTTPListenerPolicy: ignored, the whole Gateway": {
			apiVersion: "gateway.kgateway.dev/v1alpha1", kind: "HTTPListenerPolicy", body: `xffNumTrustedHops: 2`,
			wantIgnored: true,
			want:        []string{`FieldIgnored: spec.targetSelectors[0].sectionName: ignored: HTTPListenerPolicy's targetSelectors have no sectionName, so the selector targets each selected Gateway whole`},
		},
		"kgateway ListenerPolicy: the listener": {
			apiVersion: "gateway.kgateway.dev/v1alpha1", kind: "ListenerPolicy", body: `default: {perConnectionBufferLimitBytes: 1024}`,
			wantSection: "https",
			want:        []string{`SectionNotFound: spec.targetSelectors[0].sectionName: Gateway app/one has no listener named "https"; the policy takes effect once it does`},
		},
		"kgateway TrafficPolicy: the listener": {
			apiVersion: "gateway.kgateway.dev/v1alpha1", kind: "TrafficPolicy", body: `timeouts: {request: 10s}`,
			wantSection: "https",
			want:        []string{`SectionNotFound: spec.targetSelectors[0].sectionName: Gateway app/one has no listener named "https"; the policy takes effect once it does`},
		},
		"agentgateway AgentgatewayPolicy: the listener": {
			apiVersion: "agentgateway.dev/v1alpha1", kind: "AgentgatewayPolicy", body: `traffic: {timeouts: {request: 10s}}`,
			wantSection: "https",
			want:        []string{`SectionNotFound: spec.targetSelectors[0].sectionName: Gateway app/one has no listener named "https"; the policy takes effect once it does`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, `
apiVersion: `+tc.apiVersion+`
kind: `+tc.kind+`
metadata: {name: p, namespace: app}
spec:
  targetSelectors: `+selector+`
  `+tc.body)
			sels := p.TargetSelectors()
			if assert.Len(t, sels, 1) {
				assert.Equal(t, tc.wantSection, sels[0].SectionName)
				assert.Equal(t, tc.wantIgnored, sels[0].SectionNameIgnored)
			}
			assert.Equal(t, tc.want, validation.WarnMissingTargets(p, snap))
		})
	}
}
