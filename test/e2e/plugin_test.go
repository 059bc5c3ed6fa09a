//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKubectlPlugin installs the binary as kubectl installs plugins (kubectl-policy_attachment
// on the PATH) and runs `kubectl policy-attachment explain httproute/store -n NS --cluster`
// against the cluster the suite runs on: kubectl finds it, hands it its arguments and
// KUBECONFIG, the explanation names the policy behind the setting, and stderr, a pipe here,
// stays empty.
func TestKubectlPlugin(t *testing.T) {
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("needs KUBECONFIG (make e2e, make e2e-node)")
	}
	kubectl, err := exec.LookPath("kubectl")
	require.NoError(t, err)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-policy_attachment"), "../../cmd/webhook")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cl, _ := newClient(t)
	createDocs(t, cl, `{apiVersion: v1, kind: Namespace, metadata: {name: e2e-plugin}}`, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: e2e-plugin}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: e2e-plugin}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: b1, port: 80}]}]}`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-defaults, namespace: e2e-plugin}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: green}`)

	cmd := exec.Command(kubectl, "policy-attachment", "explain", "httproute/store", "-n", "e2e-plugin", "--cluster")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Equal(t, `Policies on the paths through HTTPRoute e2e-plugin/store:
  ColorPolicy e2e-plugin/gw-defaults
    Status:         Enforced (1 path)
    Overrides:      <none>
    Overridden by:  <none>
Paths:
  ColorPolicy: Gateway e2e-plugin/gw > Listener http > HTTPRoute e2e-plugin/store > Rule 0 > Service e2e-plugin/b1
    color:                   "green"  (from e2e-plugin/gw-defaults)
`, stdout.String())
	assert.Empty(t, stderr.String(), "piped: no progress")

	help := exec.Command(kubectl, "policy-attachment", "check", "--help")
	help.Env = cmd.Env
	out, err = help.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "Usage:\n  kubectl policy-attachment check (-f PATH")

	// Its messages name the command as the user typed it.
	wrong := exec.Command(kubectl, "policy-attachment", "check")
	wrong.Env = cmd.Env
	stderr.Reset()
	wrong.Stderr = &stderr
	require.Error(t, wrong.Run())
	assert.Equal(t, "kubectl policy-attachment check: no input: pass -f with a file or folder (repeatable), -f - for standard input, or -k with a kustomization folder\n", stderr.String())
}
