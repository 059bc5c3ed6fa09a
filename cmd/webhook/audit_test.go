package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// The examples are one admission sequence; read as stored state, the audit must find
// exactly the policies `check` denies, in the same words.
func TestAuditFindsWhatCheckDenies(t *testing.T) {
	code, out, errOut := runCLI(t, "", "audit", "-f", "../../examples", "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.AuditReport
	require.NoError(t, json.Unmarshal([]byte(out), &report))

	code, out, errOut = runCLI(t, "", "check", "-f", "../../examples", "-o", "json")
	require.Equal(t, 1, code, errOut)
	var checked check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &checked))

	var want []check.AuditFinding
	for _, r := range checked.Results {
		if r.Allowed {
			continue
		}
		f := check.AuditFinding{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Denials: r.Denials}
		for i := range f.Denials {
			f.Denials[i].Mode = "Deny"
		}
		want = append(want, f)
	}
	for i := range report.Findings {
		assert.NotEmpty(t, report.Findings[i].Created)
		report.Findings[i].Created = ""
	}
	assert.Equal(t, want, report.Findings)
	assert.Equal(t, check.AuditSummary{Policies: 11, Findings: 5}, report.Summary)
}

func TestAuditText(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"state.yaml": gatewayAndRoute + `---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: young, creationTimestamp: "2024-05-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: blue}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: old, creationTimestamp: "2024-04-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}
`, "warn.yaml": "enforcement: {default: Warn}\n"})
	code, out, errOut := runCLI(t, "", "audit", "-f", filepath.Join(dir, "state.yaml"), "--config", filepath.Join(dir, "warn.yaml"))
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, "WOULD DENY ColorPolicy default/young (created 2024-05-01T00:00:00Z)\n"+
		`    spec: Forbidden: Conflicted: ColorPolicy default/old on Gateway default/gw also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+
		"at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level [mode Warn]\n"+
		"2 policies audited: 1 would be denied today\n", out)
}

func TestAuditCleanAndBadInput(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"ok.yaml": gatewayAndRoute})
	code, out, _ := runCLI(t, "", "audit", "-f", dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, "0 policies audited: 0 would be denied today\n", out)

	code, _, errOut := runCLI(t, "", "audit", "-f", dir, "-o", "xml")
	assert.Equal(t, 2, code)
	assert.Equal(t, "webhook audit: --output must be text, json, yaml, wide, sarif or junit, not \"xml\"\n", errOut)

	code, _, errOut = runCLI(t, "", "audit", "--kubeconfig", filepath.Join(dir, "missing-kubeconfig"))
	assert.Equal(t, 2, code)
	assert.True(t, strings.HasPrefix(errOut, "webhook audit: "), errOut)
	assert.Contains(t, errOut, "missing-kubeconfig")

	code, out, _ = runCLI(t, "", "audit", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "of two conflicting\npolicies, the younger is reported")
}

// TestAuditOneNamespace: -n reports the findings of one namespace, judged against the whole
// state (a conflict with an older policy elsewhere is still found).
func TestAuditOneNamespace(t *testing.T) {
	t.Chdir("../..")
	code, out, errOut := runCLI(t, "", "audit", "-f", "examples", "-n", "infra")
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, "WOULD DENY ColorPolicy infra/both-ways (created 2024-01-01T00:00:13Z)\n"+
		"    spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with `defaults`; a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides` [mode Deny]\n"+
		"    spec.overrides.strategy: Unsupported value: \"merge\": MultipleMergeStrategies: supported values: \"atomic\", \"patch\" [mode Deny]\n"+
		"11 policies audited: 1 would be denied today\n", out)
	code, out, _ = runCLI(t, "", "audit", "-f", "examples", "-n", "nowhere")
	assert.Equal(t, 0, code)
	assert.Equal(t, "11 policies audited: 0 would be denied today\n", out)
}

// A folder is read a file at a time (files twice: policy kinds first), stdin at once; both
// give the same findings, located in their files, even when the CRD that makes a kind a
// policy kind comes in a later file than its policies.
func TestAuditOfAFolderReadFileByFile(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies}
  versions: [{name: v1, served: true, storage: true}]
`
	policies := `apiVersion: v1
kind: Service
metadata: {name: svc}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: one}
spec: {targetRefs: [{group: "", kind: Service, name: svc}], retries: 3}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: two}
spec: {targetRefs: [{group: "", kind: Service, name: svc}], retries: 5}
`
	dir := testkit.WriteFiles(t, map[string]string{"a-policies.yaml": policies, "b-crd.yaml": crd})
	code, fromFiles, errOut := runCLI(t, "", "audit", "-f", dir, "-o", "junit")
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, fromFiles, "a-policies.yaml")
	assert.Contains(t, fromFiles, `RetryPolicy default/one on Service default/svc also sets defaults &#34;retries&#34; to 3 (this policy: 5)`)

	code, fromStdin, errOut := runCLI(t, policies+"---\n"+crd, "audit", "-f", "-", "-o", "junit")
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, strings.ReplaceAll(fromFiles, filepath.Join(dir, "a-policies.yaml"), "-"), fromStdin)
}
