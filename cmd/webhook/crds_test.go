package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testkit"
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
// admit is judged by the rules (TestExplainLeavesOutWhatTheAPIServerRefuses shows the
// schema's defaults applied).
func TestCheckAppliesTheCRDsGiven(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "widgets.yaml")
	require.NoError(t, os.WriteFile(file, []byte(widgets), 0o600))
	code, out, errOut := runCLI(t, "", "check", "-f", widgetCRDs, "-f", file, "-o", "json")
	require.Equal(t, 1, code, errOut)
	notFound := []string{"TargetNotFound: spec.targetRefs[0]: HTTPRoute app/r not found; the policy takes effect once it exists"}
	assert.Equal(t, []verdict{
		{Name: "ok", Allowed: true, Denials: []check.Denial{}, Warnings: notFound},
		{Name: "cel", Denials: []check.Denial{{Reason: "Invalid", Field: "spec", Message: "Invalid value: a timeout needs a retry"}}, Warnings: []string{}},
		{Name: "typo", Denials: []check.Denial{{Reason: "Invalid", Field: "spec.retyr", Message: `strict decoding error: unknown field "spec.retyr"`}}, Warnings: []string{}},
	}, verdicts(t, out))

	// Without the CRDs, only the rules judge: all three are admitted.
	code, out, errOut = runCLI(t, "", "check", "-f", file, "--config", writeWidgetRow(t), "-o", "json")
	require.Equal(t, 0, code, errOut+out)
	assert.Equal(t, []verdict{
		{Name: "ok", Allowed: true, Denials: []check.Denial{}, Warnings: notFound},
		{Name: "cel", Allowed: true, Denials: []check.Denial{}, Warnings: notFound},
		{Name: "typo", Allowed: true, Denials: []check.Denial{}, Warnings: notFound},
	}, verdicts(t, out))
}

// verdict is what a test states of one result of `check -o json`.
type verdict struct {
	Name     string
	Allowed  bool
	Denials  []check.Denial
	Warnings []string
}

func verdicts(t *testing.T, out string) []verdict {
	t.Helper()
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	var got []verdict
	for _, r := range report.Results {
		got = append(got, verdict{r.Name, r.Allowed, r.Denials, r.Warnings})
	}
	return got
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
// schema's default (mode: Strict) is the setting the admitted policy supplies.
func TestExplainLeavesOutWhatTheAPIServerRefuses(t *testing.T) {
	const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec: {parentRefs: [{name: gw}]}
---
`
	code, out, errOut := runCLI(t, route+widgets, "explain", "-f", widgetCRDs, "-f", "-", "-o", "json")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `webhook explain: - document 3: left out, as the API server would refuse it: WidgetPolicy.example.io "cel" is invalid: spec: Invalid value: a timeout needs a retry
webhook explain: - document 4: left out, as the API server would refuse it: WidgetPolicy in version "v1" cannot be handled as a WidgetPolicy: strict decoding error: unknown field "spec.retyr"
`, errOut)
	var explained struct {
		Policies []struct{ Namespace, Name, Status string }
		Paths    []struct {
			Kind      string
			Path      []string
			Effective map[string]any
			Sources   map[string]string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &explained))
	assert.Equal(t, []struct{ Namespace, Name, Status string }{{"app", "ok", "Enforced"}}, explained.Policies)
	require.Len(t, explained.Paths, 1)
	p := explained.Paths[0]
	assert.Equal(t, []any{"WidgetPolicy", []string{"HTTPRoute app/r", "Rule 0"}, map[string]any{"mode": "Strict"}, map[string]string{"mode": "app/ok"}},
		[]any{p.Kind, p.Path, p.Effective, p.Sources}, "the CRD's default (mode: Strict) is what the policy sets")
}

// labelledCRD is a CRD of group example.com labelled gateway.networking.k8s.io/policy=Direct
// whose spec has the fields given (each a string, or a targetRefs list).
func labelledCRD(kind, plural string, fields ...string) string {
	props := ""
	for _, f := range fields {
		if f == "targetRefs" {
			props += "\n              targetRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}"
			continue
		}
		props += "\n              " + f + ": {type: string}"
	}
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + plural + `.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: ` + kind + `, plural: ` + plural + `}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:` + props + "\n"
}

// TestCheckDoesNotJudgeTargetlessLabelledKinds: a CRD labelled as a policy kind whose schema
// has no target field (agentgateway's AgentgatewayParameters at 75b4e6ce, a parameters kind
// labelled Direct) gets no row: its objects attach to nothing, so none is judged (judged by
// the label alone, every one was denied for naming no target), and check says so. A
// labelled kind with a target field is judged as before.
func TestCheckDoesNotJudgeTargetlessLabelledKinds(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"a.yaml": labelledCRD("GatewayParameters", "gatewayparameters", "image", "logLevel") + `---
` + labelledCRD("RetryPolicy", "retrypolicies", "targetRefs", "retries") + `---
apiVersion: example.com/v1
kind: GatewayParameters
metadata: {name: params}
spec: {image: proxy:v1, logLevel: info}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: nowhere}
spec: {retries: "3"}
`})
	code, out, errOut := runCLI(t, "", "check", "-f", dir)
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, "DENIED  RetryPolicy default/nowhere (CREATE, "+dir+"/a.yaml document 4)\n"+
		"    spec.targetRefs: Required value: InvalidTargetRef: a policy must target at least one object\n"+
		"not judged: example.com/GatewayParameters: its CRD is labelled gateway.networking.k8s.io/policy but no version of its schema has a target field (targetRef, targetRefs, targetSelectors): its objects attach to nothing, so none of them is judged\n"+
		"1 policies checked: 0 allowed, 1 denied\n", out)

	params := testkit.WriteFiles(t, map[string]string{"a.yaml": labelledCRD("GatewayParameters", "gatewayparameters", "image") + `---
apiVersion: example.com/v1
kind: GatewayParameters
metadata: {name: params}
spec: {image: proxy:v1}
`})
	code, out, errOut = runCLI(t, "", "check", "-f", params, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, check.Report{Results: []check.Result{}, NotJudged: []check.NotChecked{{Kind: "example.com/GatewayParameters",
		Message: "its CRD is labelled gateway.networking.k8s.io/policy but no version of its schema has a target field (targetRef, targetRefs, targetSelectors): its objects attach to nothing, so none of them is judged"}}}, report)
}
