package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestCheckRevealsNothingOfAnotherTenant: what `check` reports for one tenant's policies
// (denials, warnings, the annotations it predicts) holds neither the name nor the values of
// a policy in another namespace on the same Gateway; with messages.revealOtherNamespaces the
// operator sees both.
func TestCheckRevealsNothingOfAnotherTenant(t *testing.T) {
	const secretName, secretValue = "payments-secret-policy", "payments-internal-token-abc123"
	files := map[string]string{"world.yaml": `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: tenants, namespace: infra}
spec:
  from:
  - {group: policies.controller.io, kind: ColorPolicy, namespace: payments}
  - {group: policies.controller.io, kind: ColorPolicy, namespace: app}
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + secretName + `, namespace: payments}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {color: ` + secretValue + `}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: mine, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {color: blue}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: green}
`, "reveal.yaml": "messages: {revealOtherNamespaces: true}\n"}
	dir := testkit.WriteFiles(t, files)
	tenantView := func(args ...string) string {
		_, out, _ := runCLI(t, "", append([]string{"check", "-f", dir + "/world.yaml", "-o", "json"}, args...)...)
		var report check.Report
		require.NoError(t, json.Unmarshal([]byte(out), &report), out)
		var b strings.Builder
		for _, r := range report.Results {
			if r.Namespace != "app" {
				continue
			}
			data, err := json.Marshal(r)
			require.NoError(t, err)
			b.Write(data)
		}
		return b.String()
	}

	seen := tenantView()
	assert.Contains(t, seen, `Conflicted: a ColorPolicy in namespace \"payments\" on Gateway infra/gw also sets atomic overrides; across namespaces two policies that set the same setting at one level conflict whatever their values`)
	assert.Contains(t, seen, `overridden on 1 by a ColorPolicy in namespace \"payments\" (predicted at admission)`)
	for _, secret := range []string{secretName, secretValue} {
		assert.NotContains(t, seen, secret)
	}

	revealed := tenantView("--config", dir+"/reveal.yaml")
	for _, secret := range []string{secretName, secretValue} {
		assert.Contains(t, revealed, secret, "revealOtherNamespaces shows names and values")
	}
}
