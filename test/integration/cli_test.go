package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/test/harness/deployrender"
)

// webhookCLI builds the binary once per test and runs it with a kubeconfig of the local
// control plane, returning its exit code, stdout and stderr.
func webhookCLI(t *testing.T) func(args ...string) (int, string, string) {
	t.Helper()
	return webhookCLIIn(t, "")
}

// webhookCLIIn is webhookCLI run in dir (the test's own directory if ""), so that the
// manifests' names in its output are as written on the command line.
func webhookCLIIn(t *testing.T, dir string) func(args ...string) (int, string, string) {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "webhook")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/webhook")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	require.NoError(t, cluster.WriteKubeconfig(kubeconfig))
	return func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append(args, "--kubeconfig", kubeconfig)...)
		cmd.Dir = dir
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
// the policy behind each setting on a route given in kubectl's form (`explain
// httproute/store -n app`); `check --cluster` judges a pull request's manifests against what
// is stored: a second route policy setting the same block to another value is denied, an
// update of the stored one is admitted. Piped, as here, stderr stays empty; -v says what
// was read, a line per kind.
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

	code, out, errOut := run("explain", "httproute/store", "-n", "cli-app", "--cluster")
	require.Equal(t, 0, code, errOut)
	explained := `Policies on the paths through HTTPRoute cli-app/store:
  ColorPolicy cli-app/route-defaults
    Status:         Enforced (1 path)
    Overrides:      <none>
    Overridden by:  <none>
Paths:
  ColorPolicy: Gateway cli-infra/gw > Listener http > HTTPRoute cli-app/store > Rule 0 > Service cli-app/b1
    color:                   "blue"  (from cli-app/route-defaults)
`
	assert.Equal(t, explained, out)
	assert.Empty(t, errOut, "piped: no progress")
	code, out, errOut = run("explain", "--cluster", "--target", "httproute/store", "-n", "cli-app", "-v")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, explained, out, "--target says what the argument says")
	assert.Contains(t, errOut, "read 1 httproutes.gateway.networking.k8s.io by name\n", "-v: a line per kind")
	code, _, errOut = run("explain", "httproute/store", "-n", "cli-app", "--cluster", "--target", "gateway/gw")
	assert.Equal(t, 2, code)
	assert.Equal(t, "webhook explain: two targets, HTTPRoute cli-app/store and --target Gateway cli-app/gw: give one\n", errOut)

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
	assert.Empty(t, errOut, "piped: no progress")
	assert.Equal(t, `DENIED  ColorPolicy cli-app/route-green (CREATE, `+pr+` document 1)
    spec.defaults: Forbidden: Conflicted: ColorPolicy cli-app/route-defaults on HTTPRoute cli-app/store also sets atomic defaults to {"color":"blue"} (this policy: {"color":"green"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level
ALLOWED ColorPolicy cli-app/route-defaults (UPDATE, `+pr+` document 2)
    impact: Atomic defaults on HTTPRoute cli-app/store: enforced on 1 of 1 path (predicted at admission)
2 policies checked: 1 allowed, 1 denied
`, out)

	_, _, errOut = run("audit", "-n", "cli-app")
	assert.Empty(t, errOut, "piped: no progress")
	code, _, errOut = run("explain", "--cluster", "--target", "httproute/store")
	assert.Equal(t, 0, code, errOut) // the kubeconfig's namespace is "default": no such route, no paths
	code, out, errOut = run("explain", "httproute/store", "-n", "cli-app")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, explained, out, "a target and no manifests: the cluster, as kubectl reads it")
	assert.Empty(t, errOut, "piped: no progress")

	// With a target, explain reads the target's paths by name and lists only what it must:
	// a Gateway policy reaching another team's route too is judged on store's path alone,
	// exactly as when the whole cluster is read.
	namespace(t, cl, "cli-other")
	createDocs(t, cl, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other, namespace: cli-other}
spec:
  parentRefs: [{name: gw, namespace: cli-infra}]
  rules: [{backendRefs: [{name: b2, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-green, namespace: cli-infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: green}`)
	want := `Policies on the paths through HTTPRoute cli-app/store:
  ColorPolicy cli-app/route-defaults
    Status:         Enforced (1 path)
    Overrides:      cli-infra/gw-green
    Overridden by:  <none>
  ColorPolicy cli-infra/gw-green
    Status:         Overridden (1 path)
    Overrides:      <none>
    Overridden by:  cli-app/route-defaults
Paths:
  ColorPolicy: Gateway cli-infra/gw > Listener http > HTTPRoute cli-app/store > Rule 0 > Service cli-app/b1
    color:                   "blue"  (from cli-app/route-defaults)
`
	code, out, errOut = run("explain", "--cluster", "httproute/store", "-n", "cli-app", "-v")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, want, out)
	assert.Contains(t, errOut, "read 1 httproutes.gateway.networking.k8s.io by name\n")
	assert.Contains(t, errOut, "read 1 gateways.gateway.networking.k8s.io by name\n")
	assert.NotRegexp(t, `read \d+ httproutes.gateway.networking.k8s.io\n`, errOut, "no route listed")
	// The same target over the whole cluster (manifests laid over it make explain read all).
	unrelated := filepath.Join(t.TempDir(), "unrelated.yaml")
	require.NoError(t, os.WriteFile(unrelated, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: unrelated}\n"), 0o600))
	code, out, errOut = run("explain", "--cluster", "-f", unrelated, "httproute/store", "-n", "cli-app", "-v")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, want, out, "reading the whole cluster tells the same")
	assert.Regexp(t, `read \d+ httproutes.gateway.networking.k8s.io\n`, errOut)

	// Through the Gateway: its routes are found by listing, and only those are kept; it
	// explains what reading the whole cluster explains.
	code, out, errOut = run("explain", "--cluster", "gateway", "gw", "-n", "cli-infra", "-v=6")
	require.Equal(t, 0, code, errOut)
	code, whole, errWhole := run("explain", "--cluster", "-f", unrelated, "gateway", "gw", "-n", "cli-infra")
	require.Equal(t, 0, code, errWhole)
	assert.Equal(t, whole, out)
	assert.Contains(t, out, "HTTPRoute cli-other/other > Rule 0 > Service cli-other/b2\n    color:                   \"green\"  (from cli-infra/gw-green)\n")
	assert.Regexp(t, `read 2 httproutes.gateway.networking.k8s.io, of \d+ listed, on the target's paths\n`, errOut)

	// Through a backend a route names (no Service object needed), as over the whole cluster.
	code, out, errOut = run("explain", "--cluster", "svc/b2", "-n", "cli-other", "--verbose")
	require.Equal(t, 0, code, errOut)
	_, whole, _ = run("explain", "--cluster", "-f", unrelated, "--target", "svc/b2", "-n", "cli-other")
	assert.Equal(t, whole, out)
	assert.Contains(t, out, "Gateway cli-infra/gw > Listener http > HTTPRoute cli-other/other > Rule 0 > Service cli-other/b2\n")
	assert.Regexp(t, `read 1 httproutes.gateway.networking.k8s.io, of \d+ listed, on the target's paths\n`, errOut)
}

// TestUninstallRemovesTheWebhookConfigurations: `webhook uninstall` (the chart's pre-delete
// hook) deletes both configurations and says so, succeeds again when they are gone, and as
// the hook's ServiceAccount, with the chart's role, may delete the chart's configurations
// and no others.
func TestUninstallRemovesTheWebhookConfigurations(t *testing.T) {
	ctx := context.Background()
	cl, _ := newClient(t)
	createDocs(t, cl, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: uninstall-test}`, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: uninstall-test}`)
	run := webhookCLI(t)

	code, out, errOut := run("uninstall", "--name", "uninstall-test")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `validatingwebhookconfiguration.admissionregistration.k8s.io/uninstall-test deleted
mutatingwebhookconfiguration.admissionregistration.k8s.io/uninstall-test deleted
`, out)
	gone := object(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration")
	err := cl.Get(ctx, client.ObjectKey{Name: "uninstall-test"}, gone)
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)

	code, out, errOut = run("uninstall", "--name", "uninstall-test")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `validatingwebhookconfiguration.admissionregistration.k8s.io/uninstall-test not found, nothing to delete
mutatingwebhookconfiguration.admissionregistration.k8s.io/uninstall-test not found, nothing to delete
`, out)

	// The hook's own RBAC, as the chart renders it.
	namespace(t, cl, "uninstall-hook")
	rendered, err := deployrender.Helm(filepath.Join("..", "..", "deploy", "chart"), "policyattachment", "uninstall-hook", nil)
	require.NoError(t, err)
	for _, hook := range rendered.Hooks {
		if hook.GetKind() != "Job" {
			require.NoError(t, cl.Create(ctx, hook), hook.GetKind())
		}
	}
	hookSA := "system:serviceaccount:uninstall-hook:policyattachment-uninstall"
	allowed := func(verb, resource, name string) bool {
		review := object(t, fmt.Sprintf(`apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: %s
  groups: [system:serviceaccounts, "system:serviceaccounts:uninstall-hook", system:authenticated]
  resourceAttributes: {group: admissionregistration.k8s.io, resource: %s, verb: %s, name: %q}`, hookSA, resource, verb, name))
		require.NoError(t, cl.Create(ctx, review))
		ok, _, _ := unstructured.NestedBool(review.Object, "status", "allowed")
		return ok
	}
	// The API server's RBAC authorizer reads bindings through an informer: a binding just
	// created takes effect a moment later.
	require.Eventually(t, func() bool { return allowed("delete", "validatingwebhookconfigurations", "policyattachment") },
		10*time.Second, 50*time.Millisecond, "the hook's binding never took effect")
	for _, tc := range []struct {
		verb, resource, name string
		allowed              bool
	}{
		{"delete", "validatingwebhookconfigurations", "policyattachment", true},
		{"delete", "mutatingwebhookconfigurations", "policyattachment", true},
		{"get", "validatingwebhookconfigurations", "policyattachment", true},
		{"delete", "validatingwebhookconfigurations", "another", false},
		{"update", "validatingwebhookconfigurations", "policyattachment", false},
		{"list", "validatingwebhookconfigurations", "", false},
	} {
		assert.Equal(t, tc.allowed, allowed(tc.verb, tc.resource, tc.name), "%s %s/%s", tc.verb, tc.resource, tc.name)
	}
	code, _, errOut = run("uninstall", "--name", "another", "--as", hookSA)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `webhook uninstall: validatingwebhookconfiguration.admissionregistration.k8s.io/another: validatingwebhookconfigurations.admissionregistration.k8s.io "another" is forbidden: User "`+hookSA+`" cannot delete resource`)
}
