package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// diffDir holds the GitOps example of docs/gitops-diff.md: what the cluster stores
// (cluster.yaml) and a pull request (pr.yaml), with the whole outputs of check --diff as
// golden files. test/integration's TestCheckDiffOnTheLiveCluster stores cluster.yaml in a
// real API server and requires --cluster to print want.txt too.
var diffDir = filepath.Join("testdata", "check", "diff")

// colorCRD, from diffDir, is the ColorPolicy CRD the integration tests' cluster has: given
// with --base, the offline diff applies it as --cluster does, and names no kind not checked.
var colorCRD = filepath.Join("..", "..", "..", "..", "..", "test", "crds", "colorpolicies.yaml")

// TestCheckDiff: check --diff --base prints what pr.yaml changes, in text, JSON and SARIF
// (goldens), and exits 1 because it introduces findings. Without the ColorPolicy CRD, it
// says once that ColorPolicy's schema, CEL rules and defaults were not applied.
func TestCheckDiff(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(diffDir)
	golden := func(name string) string { return filepath.Join(root, diffDir, name) }

	code, out, errOut := runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "--base", colorCRD, "-f", "pr.yaml")
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, errOut)
	testkit.Golden(t, golden("want.txt"), out)

	code, out, errOut = runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "--base", colorCRD, "-f", "pr.yaml", "-o", "json")
	assert.Equal(t, 1, code, errOut)
	var report check.DiffReport
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, check.DiffSummary{Allowed: 1, Denied: 1, Introduced: 2, Fixed: 4, Unchanged: 1, Paths: 2, Policies: 2}, report.Summary)
	testkit.Golden(t, golden("want.json"), out)

	code, out, errOut = runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "--base", colorCRD, "-f", "pr.yaml", "-o", "sarif")
	assert.Equal(t, 1, code, errOut)
	var sarif map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sarif))
	testkit.Golden(t, golden("want.sarif"), strings.Replace(out, `"version": "`+buildVersion()+`"`, `"version": "VERSION"`, 1))

	// The stored state applied again changes nothing: findings unchanged, exit 0; without
	// the CRD, a line (a SARIF notification) says ColorPolicy was judged by the rules alone.
	code, out, errOut = runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "-f", "cluster.yaml")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, `Introduced (0):
  <none>
Fixed (0):
  <none>
Unchanged (5):
  ColorPolicy shop/on-gw (UPDATE, cluster.yaml document 6)
    denied: spec.targetRefs[0].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "gw-system" lets ColorPolicy from namespace "shop" reference Gateway "gw"
    denied: spec.targetRefs[1].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "gw-system" lets ColorPolicy from namespace "shop" reference Gateway "gw-old"
    warning: TargetNotFound: spec.targetRefs[1]: Gateway gw-system/gw-old not found; the policy takes effect once it exists
  ColorPolicy shop/cart-blue (UPDATE, cluster.yaml document 7)
    warning: TargetNotFound: spec.targetRefs[0]: HTTPRoute shop/cart not found; the policy takes effect once it exists
  ColorPolicy shop/cart-red (UPDATE, cluster.yaml document 8)
    warning: TargetNotFound: spec.targetRefs[0]: HTTPRoute shop/cart not found; the policy takes effect once it exists
Effective settings (0 paths change):
  <none>
Impact statuses (0 policies change):
  <none>
not checked: policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it
4 policies checked: 3 allowed, 1 denied; findings: 0 introduced, 0 fixed, 5 unchanged
`, out, "without its CRD, ColorPolicy is named once, not once per policy")
	code, out, errOut = runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "-f", "cluster.yaml", "-o", "sarif")
	assert.Equal(t, 0, code, errOut)
	assert.JSONEq(t, `{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [{
		"tool": {"driver": {"name": "policy-attachment", "informationUri": "https://github.com/policyattachment/webhook", "version": "`+buildVersion()+`", "rules": []}},
		"invocations": [{"executionSuccessful": true, "toolExecutionNotifications": [{"descriptor": {"id": "NotChecked"}, "level": "warning",
			"message": {"text": "policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it"}}]}],
		"results": []}]}`, out)
}

// TestCheckDiffWithEnforcementModes: under Warn and DryRun, the denials are relaxed
// findings with their mode, and a change set's policy admitted under Warn is stored: the
// paths and statuses it changes are there too (golden).
func TestCheckDiffWithEnforcementModes(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(diffDir)
	code, out, errOut := runCLI(t, "", "check", "--diff", "--base", "cluster.yaml", "-f", "pr.yaml", "--config", "warn.yaml")
	assert.Equal(t, 1, code, errOut)
	testkit.Golden(t, filepath.Join(root, diffDir, "want-warn.txt"), out)
}

// TestCheckDiffInputErrors: --diff needs a state to compare with, and prints only what it
// can compare; each mistake is exit 2 with one line that says what to do.
func TestCheckDiffInputErrors(t *testing.T) {
	t.Chdir(diffDir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--diff", "-f", "pr.yaml"}, "webhook check: --diff needs the state to compare with: --cluster (the live cluster) or --base PATH (manifests of the state before)\n"},
		{[]string{"--base", "cluster.yaml", "-f", "pr.yaml"}, "webhook check: --base is the state --diff compares with; give --diff too\n"},
		{[]string{"--diff", "--cluster", "--base", "cluster.yaml", "-f", "pr.yaml"}, "webhook check: --diff compares with --cluster or with --base, not both\n"},
		{[]string{"--diff", "--base", "-", "-f", "pr.yaml"}, "webhook check: --base reads files and folders, not standard input\n"},
		{[]string{"--diff", "--base", "cluster.yaml", "-f", "pr.yaml", "-o", "wide"}, "webhook check --diff: --output must be text, json, yaml or sarif, not \"wide\"\n"},
		{[]string{"--diff", "--base", "missing.yaml", "-f", "pr.yaml"}, "webhook check: --base: missing.yaml: no such file or directory\n"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"check"}, tc.args...)...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Equal(t, tc.want, errOut, tc.args)
	}
}

// TestGitOpsDiffPageShowsRealOutput: docs/gitops-diff.md shows want.txt, the output
// TestCheckDiff (and the integration test, against a real API server) requires, between its
// two markers; UPDATE_GOLDEN=1 writes it there.
func TestGitOpsDiffPageShowsRealOutput(t *testing.T) {
	page := filepath.Join("..", "..", "docs", "gitops-diff.md")
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(diffDir, "want.txt"))
	require.NoError(t, err)
	const begin, end = "<!-- check-diff-output: begin (generated from cmd/webhook/testdata/check/diff/want.txt) -->\n```\n", "```\n<!-- check-diff-output: end -->"
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "%s: the output block's markers are missing", page)
	got := text[:i+len(begin)] + string(want) + text[j:]
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(page, []byte(got), 0o644))
		return
	}
	assert.Equal(t, got, text, "%s does not show want.txt; run UPDATE_GOLDEN=1 go test ./cmd/webhook/ -run TestGitOpsDiffPageShowsRealOutput", page)

	for _, name := range []string{"cluster.yaml", "pr.yaml"} { // the page shows both files whole
		content, err := os.ReadFile(filepath.Join(diffDir, name))
		require.NoError(t, err)
		assert.Contains(t, text, strings.TrimLeft(stripComments(string(content)), "\n"), "%s shows %s", page, name)
	}
}

// stripComments drops the file's leading comment lines.
func stripComments(s string) string {
	for strings.HasPrefix(s, "#") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}
