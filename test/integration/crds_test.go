package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/check"
)

// TestCheckOnTheClusterJudgesWithItsCRDs: `check --cluster` reads the CRDs of the kinds in
// the manifests from the cluster and does first what its API server does before any
// webhook: a BackendTLSPolicy whose sectionName the CRD's pattern refuses is denied
// Invalid with the API server's field path, and the API server itself refuses the same
// object (a dry run); a route its CEL rules refuse makes the manifests unusable.
func TestCheckOnTheClusterJudgesWithItsCRDs(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "crds-app")
	const policy = `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: bad-section, namespace: crds-app}
spec:
  targetRefs: [{group: "", kind: Service, name: s, sectionName: Bad_Name}]
  validation: {hostname: s.example.com, wellKnownCACertificates: System}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte(policy), 0o600))
	run := webhookCLI(t)
	code, out, errOut := run("check", "--cluster", "-f", file, "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.Len(t, report.Results, 1)
	require.Len(t, report.Results[0].Denials, 1)
	assert.Equal(t, "Invalid", report.Results[0].Denials[0].Reason)
	assert.Equal(t, "spec.targetRefs[0].sectionName", report.Results[0].Denials[0].Field)

	err := cl.Create(context.Background(), object(t, policy), client.DryRunAll)
	require.True(t, apierrors.IsInvalid(err), "the API server refuses it too: %v", err)
	assert.Contains(t, err.Error(), "spec.targetRefs[0].sectionName")

	route := filepath.Join(dir, "route.yaml")
	require.NoError(t, os.WriteFile(route, []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: relative, namespace: crds-app}
spec:
  rules: [{matches: [{path: {type: PathPrefix, value: relative}}]}]
`), 0o600))
	code, _, errOut = run("check", "--cluster", "-f", route)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `document 1: the API server would refuse it: HTTPRoute.gateway.networking.k8s.io "relative" is invalid: spec.rules[0].matches[0].path: Invalid value: `)
}
