package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
)

// widgetCRDs are the CRDs of testdata/crds/widgetpolicies.yaml.
const widgetCRDs = "testdata/crds/widgetpolicies.yaml"

const widgets = `apiVersion: example.io/v1
kind: WidgetPolicy
metadata: {name: ok, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]}
---
apiVersion: example.io/v1
kind: WidgetPolicy
metadata: {name: cel, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], timeout: 1s}
---
apiVersion: example.io/v1
kind: WidgetPolicy
metadata: {name: typo, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], retyr: 1}
`

// TestCheckAppliesTheCRDsGiven: CRDs among the manifests judge first, as the API server
// does before any webhook: a policy their CEL rules refuse, or with a field the schema does
// not declare, is denied Invalid with the API server's field path and words; one they
// admit is judged by the rules, with the schema's defaults applied.
func TestCheckAppliesTheCRDsGiven(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "widgets.yaml")
	require.NoError(t, os.WriteFile(file, []byte(widgets), 0o600))
	code, out, errOut := runCLI(t, "", "check", "-f", widgetCRDs, "-f", file, "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.Len(t, report.Results, 3)
	assert.True(t, report.Results[0].Allowed)
	assert.Equal(t, []check.Denial{{Reason: "Invalid", Field: "spec", Message: "Invalid value: a timeout needs a retry"}}, report.Results[1].Denials)
	assert.Equal(t, []check.Denial{{Reason: "Invalid", Field: "spec.retyr", Message: `strict decoding error: unknown field "spec.retyr"`}}, report.Results[2].Denials)

	// Without the CRDs, only the rules judge: all three are admitted.
	code, out, errOut = runCLI(t, "", "check", "-f", file, "--config", writeWidgetRow(t), "-o", "json")
	require.Equal(t, 0, code, errOut+out)
}

// writeWidgetRow is a config whose row describes WidgetPolicy, for a run without its CRD.
func writeWidgetRow(t *testing.T) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`kinds:
- group: example.io
  kind: WidgetPolicy
  versions: [v1]
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
`), 0o600))
	return config
}

// TestCheckRefusesAnObjectItsCRDRefuses: a non-policy object the API server would refuse
// makes the manifests unusable (exit 2), worded as the API server words it.
func TestCheckRefusesAnObjectItsCRDRefuses(t *testing.T) {
	code, out, errOut := runCLI(t, "apiVersion: example.io/v1\nkind: Gadget\nmetadata: {name: too-long, namespace: app}\nspec: {}\n",
		"check", "-f", widgetCRDs, "-f", "-")
	assert.Equal(t, 2, code, out)
	assert.Equal(t, `webhook check: - document 1: the API server would refuse it: Gadget.example.io "too-long" is invalid: <nil>: Invalid value: a gadget's name is at most 5 characters`+"\n", errOut)
}

// TestExplainLeavesOutWhatTheAPIServerRefuses: explain reads the state a cluster would
// hold: a policy its CRD refuses is left out, said on stderr, and the rest explained; the
// schema's defaults are in what it shows.
func TestExplainLeavesOutWhatTheAPIServerRefuses(t *testing.T) {
	code, out, errOut := runCLI(t, widgets, "explain", "-f", widgetCRDs, "-f", "-", "-o", "json")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `webhook explain: - document 2: left out, as the API server would refuse it: WidgetPolicy.example.io "cel" is invalid: spec: Invalid value: a timeout needs a retry
webhook explain: - document 3: left out, as the API server would refuse it: WidgetPolicy in version "v1" cannot be handled as a WidgetPolicy: strict decoding error: unknown field "spec.retyr"
`, errOut)
	var explained struct {
		Policies []struct{ Namespace, Name string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &explained))
	require.Len(t, explained.Policies, 1)
	assert.Equal(t, "ok", explained.Policies[0].Name)
}
