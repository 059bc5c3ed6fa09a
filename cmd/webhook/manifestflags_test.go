package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/test/harness/testkit"
)

const routePolicy = `apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-blue, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: blue}
`

// TestFolderAndKustomizationInput: as kubectl -f, a folder is its own files; -R adds its
// subfolders'; -k reads what a kustomization renders, judged exactly as the same objects
// read with -f.
func TestFolderAndKustomizationInput(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{
		"topology.yaml":           gatewayAndRoute,
		"policies/route.yaml":     routePolicy,
		"policies/notes/old.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old"}}`,
	})
	code, out, errOut := runCLI(t, "", "check", "-f", dir)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "0 policies checked: 0 allowed, 0 denied\n", out, "the subfolder is not read without -R")

	code, out, errOut = runCLI(t, "", "check", "-f", dir, "-R", "-o", "wide")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `VERDICT   KIND          NAMESPACE   NAME         OPERATION   REASONS   WARNINGS   SOURCE
Allowed   ColorPolicy   default     route-blue   CREATE      <none>    0          `+filepath.Join(dir, "policies", "route.yaml")+` document 1
`, out)

	app := testkit.WriteFiles(t, map[string]string{
		"topology.yaml":       gatewayAndRoute,
		"policies/route.yaml": routePolicy,
		"kustomization.yaml":  "resources: [topology.yaml, policies/route.yaml]\n",
	})
	code, out, errOut = runCLI(t, "", "check", "-k", app, "-o", "wide")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `VERDICT   KIND          NAMESPACE   NAME         OPERATION   REASONS   WARNINGS   SOURCE
Allowed   ColorPolicy   default     route-blue   CREATE      <none>    0          `+app+` document 2
`, out, "kustomize renders the Gateway first")

	code, out, errOut = runCLI(t, "", "check", "-f", app)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "webhook check: "+app+"/kustomization.yaml: a kustomization, not manifests: read what it renders with -k "+app+"\n", errOut)

	code, out, errOut = runCLI(t, "", "check", "-k", dir)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "webhook check: -k "+dir+": unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '"+dir+"'\n", errOut)
}

// TestWideOutput: -o wide is one row per policy (check) or finding (audit), as golden files.
func TestWideOutput(t *testing.T) {
	t.Chdir("../..")
	code, out, errOut := runCLI(t, "", "check", "-f", "examples", "-o", "wide")
	require.Equal(t, 1, code, errOut)
	testkit.Golden(t, filepath.Join("cmd", "webhook", "testdata", "check", "wide", "examples.txt"), out)
	code, out, errOut = runCLI(t, "", "audit", "-f", "examples", "-o", "wide")
	require.Equal(t, 1, code, errOut)
	testkit.Golden(t, filepath.Join("cmd", "webhook", "testdata", "check", "wide", "examples-audit.txt"), out)

	code, out, errOut = runCLI(t, "", "audit", "-f", "examples", "-A", "-n", "app")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "webhook audit: give -n or -A, not both\n", errOut)
	code, all, _ := runCLI(t, "", "audit", "-f", "examples", "-A")
	assert.Equal(t, 1, code)
	_, plain, _ := runCLI(t, "", "audit", "-f", "examples")
	assert.Equal(t, plain, all, "-A is the default")
}
