package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
// Invalid with the causes (field and message) the API server itself gives for the same
// object (a dry run); a route its CEL rules refuse makes the manifests unusable, said in
// the API server's words.
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

	// The API server refuses the same object with the same causes, field by field.
	err := cl.Create(context.Background(), object(t, policy), client.DryRunAll)
	require.True(t, apierrors.IsInvalid(err), "the API server refuses it too: %v", err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	var want []check.Denial
	for _, c := range status.Status().Details.Causes {
		want = append(want, check.Denial{Reason: "Invalid", Field: c.Field, Message: c.Message})
	}
	require.NotEmpty(t, want, "the API server names the fields it refuses")
	assert.Equal(t, "spec.targetRefs[0].sectionName", want[0].Field)
	assert.Equal(t, want, report.Results[0].Denials)

	route := filepath.Join(dir, "route.yaml")
	require.NoError(t, os.WriteFile(route, []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: relative, namespace: crds-app}
spec:
  rules: [{matches: [{path: {type: PathPrefix, value: relative}}]}]
`), 0o600))
	code, out, errOut = run("check", "--cluster", "-f", route)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	err = cl.Create(context.Background(), object(t, readFile(t, route)), client.DryRunAll)
	require.True(t, apierrors.IsInvalid(err), "the API server refuses the route too: %v", err)
	// Word for word, but for one difference of versions: this control plane (Kubernetes
	// 1.34) quotes the value of a CEL rule's error as "object", which the apiextensions
	// packages in go.mod (v0.37) omit, as newer API servers do.
	apiServer := strings.Replace(err.Error(), `Invalid value: "object": `, "Invalid value: ", 1)
	assert.Equal(t, "webhook check: "+route+" document 1: the API server would refuse it: "+apiServer+"\n", errOut)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
