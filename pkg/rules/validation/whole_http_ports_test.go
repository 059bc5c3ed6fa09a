package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// Envoy Gateway serves plain-HTTP listeners sharing a port as one Envoy listener and refuses
// a ClientTrafficPolicy that covers some of them (internal/gatewayapi/clienttrafficpolicy.go
// validatePortOverlapForClientTrafficPolicy, v1.9.1; the cases are those make oracle found).
func TestValidateWholeHTTPPorts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const world = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: web, protocol: HTTP, port: 80, hostname: "*.example.com"}
  - {name: api, protocol: HTTP, port: 8080}
  - {name: tls, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
  - {name: tls2, protocol: HTTPS, port: 443, hostname: "*.example.com", tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: alt, protocol: HTTP, port: 8080, hostname: alt.example.com}
  - {name: own, protocol: HTTP, port: 9090}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: clash, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: same, protocol: HTTP, port: 9090}`
	ctp := func(target string) string {
		return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: p, namespace: infra}
spec:
  targetRefs: [` + target + `]
  timeout: {http: {idleTimeout: 5s}}`
	}
	const tail = "; the implementation serves plain-HTTP listeners on one port as one, and refuses a ClientTrafficPolicy that covers some of them: target what covers them all, or give the listeners their own ports"
	cases := map[string]struct {
		target string
		want   field.ErrorList
	}{
		"a listener sharing its port with another of the Gateway": {
			target: `{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonInvalidTargetRef,
				`Gateway infra/gw listener "http" shares port 80 with plain-HTTP listener "web" of Gateway infra/gw, which this target does not cover`+tail)},
		},
		"a listener sharing its port with one of an accepted ListenerSet": {
			target: `{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: api}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonInvalidTargetRef,
				`Gateway infra/gw listener "api" shares port 8080 with plain-HTTP listener "alt" of ListenerSet infra/extra, which this target does not cover`+tail)},
		},
		"a whole ListenerSet sharing a port with the Gateway": {
			target: `{group: gateway.networking.k8s.io, kind: ListenerSet, name: extra}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonInvalidTargetRef,
				`ListenerSet infra/extra listener "alt" shares port 8080 with plain-HTTP listener "api" of Gateway infra/gw, which this target does not cover`+tail)},
		},
		"the whole Gateway covers its ListenerSets' listeners too": {
			target: `{group: gateway.networking.k8s.io, kind: Gateway, name: gw}`,
		},
		"HTTPS listeners sharing a port have their own filter chains": {
			target: `{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: tls}`,
		},
		"a listener in conflict with an earlier one is not served": {
			target: `{group: gateway.networking.k8s.io, kind: ListenerSet, name: extra, sectionName: own}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, world)
			got := validation.ValidateWholeHTTPPorts(rulestest.PolicyOf(t, table, ctp(tc.target)), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}
