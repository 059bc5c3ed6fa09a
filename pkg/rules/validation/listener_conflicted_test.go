package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// A sectionName naming a listener that loses a listener conflict is warned, with what it
// shares with the listener that wins; one that may lose (the reading depends on what the
// webhook cannot see) is not.
func TestWarnListenerConflicted(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const world = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: All}}
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: any, protocol: HTTP, port: 8080}
  - {name: raw, protocol: TCP, port: 9000}
  - {name: tls, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: any, protocol: HTTP, port: 8080}
  - {name: raw, protocol: TCP, port: 9000}
  - {name: tls, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: mine}]}}
  - {name: plain, protocol: HTTP, port: 7000}
  - {name: beside, protocol: TCP, port: 7000}`
	const precedence = "Gateway API accepts the first of the two: the Gateway's own listeners, then ListenerSets' oldest first, then by namespace/name; the policy takes effect through it once the conflict is gone"
	cases := map[string]struct {
		namespace, section string
		want               []string
	}{
		"a hostname": {namespace: "infra", section: "web", want: []string{
			`ListenerConflicted: spec.targetRefs[0].sectionName: listener "web" of ListenerSet infra/ls is not accepted (HostnameConflict): it has the port (80), protocol (HTTP) and hostname ("a.example.com") of listener "web" of Gateway infra/gw; ` + precedence}},
		"no hostname": {namespace: "infra", section: "any", want: []string{
			`ListenerConflicted: spec.targetRefs[0].sectionName: listener "any" of ListenerSet infra/ls is not accepted (HostnameConflict): it has the port (8080) and protocol (HTTP) of listener "any" of Gateway infra/gw, and no hostname, as that one; ` + precedence}},
		"two TCP listeners on a port": {namespace: "infra", section: "raw", want: []string{
			`ListenerConflicted: spec.targetRefs[0].sectionName: listener "raw" of ListenerSet infra/ls is not accepted (ProtocolConflict): it is a TCP listener on port 9000, as listener "raw" of Gateway infra/gw is, and a port has one TCP listener; ` + precedence}},
		"a TCP listener beside an HTTP one of its own ListenerSet": {namespace: "infra", section: "beside", want: []string{
			`ListenerConflicted: spec.targetRefs[0].sectionName: listener "beside" of ListenerSet infra/ls is not accepted (ProtocolConflict): it is a TCP listener on port 7000, where listener "plain" of the same ListenerSet serves HTTP, and Gateway API accepts no TCP listener on a port with HTTP, HTTPS or TLS listeners; the policy takes effect through it once the conflict is gone`}},
		"from another namespace, the winner is not named": {namespace: "app", section: "web", want: []string{
			`ListenerConflicted: spec.targetRefs[0].sectionName: listener "web" of ListenerSet infra/ls is not accepted (HostnameConflict): it has the port (80), protocol (HTTP) and hostname ("a.example.com") of a listener of a Gateway in namespace "infra"; ` + precedence}},
		"an HTTPS listener may win or lose: no warning":        {namespace: "infra", section: "tls"},
		"the HTTP listener beside a TCP one stays: no warning": {namespace: "infra", section: "plain"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, world)
			p := rulestest.PolicyOf(t, table, `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: `+tc.namespace+`}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls, namespace: infra, sectionName: `+tc.section+`}]
  timeout: {http: {requestTimeout: 5s}}`)
			assert.Equal(t, tc.want, validation.WarnMissingTargets(p, snap))
		})
	}
}
