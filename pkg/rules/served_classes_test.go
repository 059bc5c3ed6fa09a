package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// mixedClasses is a cluster running two implementations: Istio's Gateway mesh, Envoy
// Gateway's Gateway edge, a route each parents alone and one both parent.
const mixedClasses = `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mesh, namespace: shop}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: unclassed, namespace: shop}
spec:
  gatewayClassName: not-installed-yet
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mesh-only, namespace: shop}
spec:
  parentRefs: [{name: mesh}]
  rules: [{backendRefs: [{name: checkout, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared, namespace: shop}
spec:
  parentRefs: [{name: mesh}, {name: edge}]
  rules: [{backendRefs: [{name: checkout, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: named-by-both, namespace: shop}
spec:
  parentRefs: [{name: mesh}, {name: edge, sectionName: https}]
  rules: [{backendRefs: [{name: checkout, port: 8080}]}]
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: stray, namespace: other}
spec:
  parentRefs: [{name: mesh, namespace: shop}]
  rules: [{backendRefs: [{name: checkout, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: shop}
spec:
  ports: [{name: http, port: 8080}]`

func btp(namespace, name, kind, target, timeout string) string {
	return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: ` + name + `, namespace: ` + namespace + `, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ` + kind + `, name: ` + target + `}]
  timeout: {http: {requestTimeout: ` + timeout + `}}`
}

// A second Envoy Gateway policy at one target is refused by Envoy Gateway only where Envoy
// Gateway acts: through the Gateways of its own GatewayClass (or of one not there yet).
func TestPoliciesAreJudgedWhereTheirImplementationServes(t *testing.T) {
	const (
		egServes   = `(served by Envoy Gateway's "gateway.envoyproxy.io/gatewayclass-controller")`
		meshNotEG  = `of GatewayClass "istio", whose controller "istio.io/gateway-controller" does not act on BackendTrafficPolicy ` + egServes + `; the policy takes no effect through it`
		oneAllowed = "BackendTrafficPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)"
	)
	tests := map[string]struct {
		config                  string
		namespace, kind, target string
		want                    field.ErrorList
		warnings                []string
	}{
		"on another class's Gateway": {
			kind: "Gateway", target: "mesh",
			warnings: []string{"NotServed: spec.targetRefs[0]: Gateway shop/mesh " + meshNotEG},
		},
		"on a route only another class's Gateway parents": {
			kind: "HTTPRoute", target: "mesh-only",
			warnings: []string{"NotServed: spec.targetRefs[0]: HTTPRoute shop/mesh-only reaches Gateway shop/mesh " + meshNotEG},
		},
		"on a route both classes' Gateways parent": {
			kind: "HTTPRoute", target: "shared",
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"HTTPRoute shop/shared already has BackendTrafficPolicy shop/first; "+oneAllowed)},
			warnings: []string{"NotServed: spec.targetRefs[0]: HTTPRoute shop/shared reaches Gateway shop/mesh " + meshNotEG},
		},
		"on a route both classes' Gateways name, which only another class's admits": {
			// Envoy Gateway holds a route its Gateway is a parent of, attached or not, and
			// refuses the second policy there (oracle, seed 7 scenario 36).
			kind: "HTTPRoute", target: "named-by-both",
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"HTTPRoute shop/named-by-both already has BackendTrafficPolicy shop/first; "+oneAllowed)},
			warnings: []string{"NotServed: spec.targetRefs[0]: HTTPRoute shop/named-by-both reaches Gateway shop/mesh " + meshNotEG},
		},
		"on a route only another class's Gateway names, which does not admit it": {
			// No path at all, yet no controller of the kind holds the route (oracle, seed 1
			// scenario 41).
			namespace: "other", kind: "HTTPRoute", target: "stray",
			warnings: []string{"NotServed: spec.targetRefs[0]: HTTPRoute other/stray reaches Gateway shop/mesh " + meshNotEG},
		},
		"on its own class's Gateway": {
			kind: "Gateway", target: "edge",
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Gateway shop/edge already has BackendTrafficPolicy shop/first; "+oneAllowed)},
		},
		"on a Gateway whose class is not there yet": {
			kind: "Gateway", target: "unclassed",
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Gateway shop/unclassed already has BackendTrafficPolicy shop/first; "+oneAllowed)},
			warnings: []string{`GatewayClassNotFound: spec.targetRefs[0]: Gateway shop/unclassed of GatewayClass "not-installed-yet", which is not found; judged as if a controller of BackendTrafficPolicy served it ` + egServes},
		},
		"on another class's Gateway, when the installation names Envoy Gateway's controller so": {
			config: `
implementations:
- name: envoy-gateway
  title: Envoy Gateway
  controllerNames: [gateway.envoyproxy.io/gatewayclass-controller, istio.io/gateway-controller]`,
			kind: "Gateway", target: "mesh",
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Gateway shop/mesh already has BackendTrafficPolicy shop/first; "+oneAllowed)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			if tc.config != "" {
				_, err := rules.LoadConfig([]byte(tc.config), "config.yaml", table)
				require.NoError(t, err)
			}
			namespace := tc.namespace
			if namespace == "" {
				namespace = "shop"
			}
			snap := rulestest.World(t, table, mixedClasses, btp(namespace, "first", tc.kind, tc.target, "10s"))
			v := rulestest.Judge(t, table, snap, btp(namespace, "second", tc.kind, tc.target, "20s"))
			rulestest.Matcher.Test(t, tc.want, v.Denials)
			assert.Equal(t, tc.warnings, v.Warnings)
		})
	}
}

// A kind whose row names no implementation (Gateway API's own, one known only from its CRD
// label) is served on every Gateway: its pair conflicts on another class's Gateway too.
func TestUnscopedKindsAreServedEverywhere(t *testing.T) {
	table := kinds.BuiltinKindTable()
	color := func(name, value string) string {
		return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: shop, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: mesh}]
  color: ` + value
	}
	snap := rulestest.World(t, table, mixedClasses, color("first", "red"))
	v := rulestest.Judge(t, table, snap, color("second", "blue"))
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
		`ColorPolicy shop/first on Gateway shop/mesh also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)}, v.Denials)
	assert.Empty(t, v.Warnings)
}

// A config file's implementations are checked before anything changes: a row naming an
// implementation the table does not define, and a controller name that is not a
// domain-prefixed path, are refused whole.
func TestImplementationsConfigIsValidated(t *testing.T) {
	tests := map[string]struct{ config, wantErr string }{
		"a controller name without a domain": {
			config:  "implementations:\n- {name: envoy-gateway, controllerNames: [my-controller]}\n",
			wantErr: `config.yaml: implementations[0]: implementation "envoy-gateway": controller name "my-controller" must be a domain-prefixed path (example.net/gateway-controller)`,
		},
		"a row naming an undefined implementation": {
			config: `kinds:
- group: example.com
  kind: FooPolicy
  class: Direct
  implementations: [foo]
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
`,
			wantErr: `config.yaml: kinds[0]: implementations "foo" are not defined; known: agentgateway, envoy-gateway, gke, istio, kgateway, kuadrant, linkerd, nginx-gateway-fabric`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			_, err := rules.LoadConfig([]byte(tc.config), "config.yaml", table)
			require.EqualError(t, err, tc.wantErr)
			row := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
			assert.True(t, row.Serves("gateway.envoyproxy.io/gatewayclass-controller"), "nothing changed")
			assert.False(t, row.Serves("my-controller"))
		})
	}
}
