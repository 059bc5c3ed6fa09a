//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/test/harness/testkit"
)

// tdelWorld is a Gateway in infraNS with a default of its own, and a route in appNS attached
// to it alone, with a policy of its own.
func tdelWorld(infraNS, appNS string) []string {
	return []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ` + infraNS + `}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store-` + infraNS + `, namespace: ` + appNS + `}
spec:
  parentRefs: [{name: gw, namespace: ` + infraNS + `}]
  rules: [{backendRefs: [{name: store, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-defaults, namespace: ` + infraNS + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: red}`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: store-blue-` + infraNS + `, namespace: ` + appNS + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store-` + infraNS + `}]
  color: blue`}
}

func tdelGateway(namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("gateway.networking.k8s.io/v1")
	u.SetKind("Gateway")
	u.SetNamespace(namespace)
	u.SetName("gw")
	return u
}

func tdelNamespaces(t *testing.T, cl client.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		apply(t, cl, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}})
	}
}

// tdelWarnings are the warnings of deleting that Gateway, as its namespace reads them.
func tdelWarnings(infraNS, appNS string) []string {
	return []string{
		`DeleteImpact: deleting Gateway ` + infraNS + `/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy ` + infraNS + `/gw-defaults`,
		`DeleteImpact: deleting Gateway ` + infraNS + `/gw leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "` + appNS + `"`,
	}
}

// waitForDeletionWarnings dry-runs the Gateway's deletion until the webhook has seen the
// world around it (each replica behind the Service: five answers in a row).
func waitForDeletionWarnings(t *testing.T, cl client.Client, w *testkit.Warnings, namespace string, want []string) {
	t.Helper()
	inARow := 0
	eventually(t, "the webhook warns the deletion of Gateway "+namespace+"/gw", func() error {
		w.Take()
		if err := cl.Delete(context.Background(), tdelGateway(namespace), client.DryRunAll); err != nil {
			inARow = 0
			return err
		}
		if got := w.Take(); !assert.ObjectsAreEqual(want, got) {
			inARow = 0
			return fmt.Errorf("warnings %q", got)
		}
		if inARow++; inARow < 5 {
			return fmt.Errorf("%d answers in a row so far", inARow)
		}
		return nil
	})
}

// TestTargetDeletionWarns: deleting a Gateway whose policies lose their target goes
// through, with the warnings kubectl prints, in the words its namespace may read.
func TestTargetDeletionWarns(t *testing.T) {
	cl, w := newClient(t)
	tdelNamespaces(t, cl, "e2e-tdel-warn", "e2e-tdel-app")
	createDocs(t, cl, tdelWorld("e2e-tdel-warn", "e2e-tdel-app")...)
	want := tdelWarnings("e2e-tdel-warn", "e2e-tdel-app")
	waitForDeletionWarnings(t, cl, w, "e2e-tdel-warn", want)
	stdout, stderr, err := kubectl(t, "delete", "gateway", "gw", "-n", "e2e-tdel-warn")
	require.NoError(t, err, stderr)
	assert.Equal(t, "Warning: "+want[0]+"\nWarning: "+want[1]+"\n", stderr)
	assert.Equal(t, `gateway.gateway.networking.k8s.io "gw" deleted`+"\n", stdout)
	t.Logf("$ kubectl delete gateway gw -n e2e-tdel-warn\n%s%s", stderr, stdout)
}

// kubectl runs kubectl against the suite's cluster (KUBECONFIG) and returns what it printed.
func kubectl(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	path, lookErr := exec.LookPath("kubectl")
	require.NoError(t, lookErr)
	var out, errOut bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestTargetDeletionRefusedThenFailsOpen: with the webhook's config saying Deny for one
// namespace (the shipped config plus a targetDeletions rule, rolled out), deleting a Gateway
// there whose policies rely on it is refused with the whole message; with the webhook down
// (scaled to nothing), the same deletion goes through: its configuration fails open.
func TestTargetDeletionRefusedThenFailsOpen(t *testing.T) {
	cl, w := newClient(t)
	tdelNamespaces(t, cl, "e2e-tdel-deny", "e2e-tdel-app")
	withConfig(t, map[string]any{"targetDeletions": map[string]any{"rules": []any{map[string]any{
		"mode": "Deny", "namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "e2e-tdel-deny"}},
	}}}})
	createDocs(t, cl, tdelWorld("e2e-tdel-deny", "e2e-tdel-app")...)
	refusal := `admission webhook "targets.policyattachment.io" denied the request: TargetInUse: deleting Gateway e2e-tdel-deny/gw is refused (targetDeletions mode Deny in namespace "e2e-tdel-deny"): ` +
		`it leaves 1 policy without a target, so it applies nowhere: ColorPolicy e2e-tdel-deny/gw-defaults; ` +
		`it leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "e2e-tdel-app"; ` +
		`retarget or delete those policies first, or ask your platform team to lift the mode`
	inARow := 0
	eventually(t, "the dry run is refused by every replica", func() error {
		err := cl.Delete(context.Background(), tdelGateway("e2e-tdel-deny"), client.DryRunAll)
		if err == nil || err.Error() != refusal {
			inARow = 0
			return fmt.Errorf("got %v", err)
		}
		if inARow++; inARow < 5 {
			return fmt.Errorf("%d refusals in a row so far", inARow)
		}
		return nil
	})
	err := cl.Delete(context.Background(), tdelGateway("e2e-tdel-deny"))
	require.Error(t, err)
	assert.Equal(t, refusal, err.Error())
	assert.True(t, apierrors.IsForbidden(err), "403 Forbidden: %v", err)
	assert.Empty(t, w.Take(), "a refusal carries no warnings")
	stdout, stderr, err := kubectl(t, "delete", "gateway", "gw", "-n", "e2e-tdel-deny")
	require.Error(t, err, "kubectl exits non-zero")
	assert.Equal(t, "Error from server (Forbidden): "+refusal+"\n", stderr)
	assert.Empty(t, stdout)
	t.Logf("$ kubectl delete gateway gw -n e2e-tdel-deny\n%s", stderr)

	webhook(t, "stop")
	defer webhook(t, "start")
	eventually(t, "the deletion goes through with the webhook down", func() error {
		return cl.Delete(context.Background(), tdelGateway("e2e-tdel-deny"))
	})
	assert.Empty(t, w.Take(), "nobody reviewed it")
	gone := tdelGateway("e2e-tdel-deny")
	assert.True(t, apierrors.IsNotFound(cl.Get(context.Background(), client.ObjectKeyFromObject(gone), gone)))
}

// withConfig runs the webhook, until the test ends, with its config file plus the given
// top-level sections: the local harness's process restarted with --config, or the
// Deployment's config file (its ConfigMap) edited and rolled out, and put back after.
func withConfig(t *testing.T, sections map[string]any) {
	t.Helper()
	if os.Getenv("E2E_WEBHOOK_CONTROL") != "" {
		data, err := yaml.Marshal(sections)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		restartWebhookWith(t, "--config="+path)
		return
	}
	_, cs := deployed(t)
	ctx := context.Background()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "policyattachment-webhook", metav1.GetOptions{})
	require.NoError(t, err)
	name := ""
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			name = v.ConfigMap.Name
		}
	}
	require.NotEmpty(t, name, "the Deployment mounts its config file from a ConfigMap")
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	original := cm.Data["config.yaml"]
	var config map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(original), &config))
	for k, v := range sections {
		config[k] = v
	}
	edited, err := yaml.Marshal(config)
	require.NoError(t, err)
	setConfig := func(text string) {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data["config.yaml"] = text
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		restartDeployment(t, cs)
	}
	setConfig(string(edited))
	t.Cleanup(func() { setConfig(original) })
}

// restartDeployment rolls the webhook's Deployment out again (kubectl rollout restart) and
// waits until only replicas of the new template are left, ready.
func restartDeployment(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	rollOutWith(t, cs, func(d *appsv1.Deployment) {
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339Nano)
	})
}
