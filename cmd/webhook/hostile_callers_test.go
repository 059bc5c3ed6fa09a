package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/rulestest"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// Two integers that one float64 cannot tell apart are two values all the way through
// `webhook check`: read from YAML, kept in the snapshot as compact JSON, compared, and
// quoted in the denial as written.
func TestCheckComparesLargeIntegersExactly(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"a.yaml": `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: first, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  overrides: {strategy: patch, limits: {rps: 9007199254740993}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: second, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  overrides: {strategy: patch, limits: {rps: 9007199254740992}}
`})
	code, out, errOut := runCLI(t, "", "check", "-f", dir, "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report), out)
	require.Len(t, report.Results, 2)
	assert.True(t, report.Results[0].Allowed)
	assert.Equal(t, []check.Denial{{
		Reason: "Conflicted", Field: "spec.overrides.limits.rps",
		Message: `Forbidden: Conflicted: ColorPolicy app/first on Gateway app/gw also sets overrides "limits.rps" to 9007199254740993 (this policy: 9007199254740992); ` + rulestest.OrderDetail,
	}}, report.Results[1].Denials)
}
