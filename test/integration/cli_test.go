package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webhookCLI builds the binary once per test and runs it with a kubeconfig of the local
// control plane, returning its exit code, stdout and stderr.
func webhookCLI(t *testing.T) func(args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "webhook")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/webhook")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, cluster.WriteKubeconfig(kubeconfig))
	return func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append(args, "--kubeconfig", kubeconfig)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, stdout.String(), stderr.String()
	}
}

// TestCheckAndExplainOnTheLiveCluster: `explain --cluster` reads the live cluster and names
// the policy behind each setting on a route given in kubectl's form; `check --cluster`
// judges a pull request's manifests against what is stored: a second route policy setting
// the same block to another value is denied, an update of the stored one is admitted.
func TestCheckAndExplainOnTheLiveCluster(t *testing.T) {
	cl, _ := newClient(t)
	for _, ns := range []string{"cli-infra", "cli-app"} {
		namespace(t, cl, ns)
	}
	createDocs(t, cl, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: cli-infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: cli-app}
spec:
  parentRefs: [{name: gw, namespace: cli-infra}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: cli-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: blue}`)
	run := webhookCLI(t)

	code, out, errOut := run("explain", "--cluster", "--target", "httproute/store", "-n", "cli-app")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `Policies:
  ColorPolicy cli-app/route-defaults
    Status:         Enforced (1 path)
    Overrides:      <none>
    Overridden by:  <none>
Paths:
  ColorPolicy: Gateway cli-infra/gw > Listener http > HTTPRoute cli-app/store > Rule 0 > Service cli-app/b1
    color:                   "blue"  (from cli-app/route-defaults)
`, out)
	assert.Contains(t, errOut, "read 1 httproutes.gateway.networking.k8s.io", "progress on stderr")

	pr := filepath.Join(t.TempDir(), "pr.yaml")
	require.NoError(t, os.WriteFile(pr, []byte(`apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-green, namespace: cli-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: green}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: cli-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: red}
`), 0o600))
	code, out, errOut = run("check", "--cluster", "-f", pr)
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, `DENIED  ColorPolicy cli-app/route-green (CREATE, `+pr+` document 1)
    spec.defaults: Forbidden: Conflicted: ColorPolicy cli-app/route-defaults on HTTPRoute cli-app/store also sets atomic defaults to {"color":"blue"} (this policy: {"color":"green"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level
ALLOWED ColorPolicy cli-app/route-defaults (UPDATE, `+pr+` document 2)
    impact: Atomic defaults on HTTPRoute cli-app/store: enforced on 1 of 1 path (predicted at admission)
2 policies checked: 1 allowed, 1 denied
`, out)

	code, _, errOut = run("explain", "--cluster", "--target", "httproute/store")
	assert.Equal(t, 0, code, errOut) // the kubeconfig's namespace is "default": no such route, no paths
	code, _, errOut = run("explain", "--target", "httproute/store")
	assert.Equal(t, 2, code)
	assert.Equal(t, "webhook explain: give manifests (-f PATH) or --cluster\n", errOut)
}
