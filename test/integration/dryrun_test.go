package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/test/harness/deployrender"
)

// prometheusOperator is the release whose CRDs (ServiceMonitor, PrometheusRule) the
// monitoring component is checked against.
const prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// TestOverlaysPassServerSideDryRun: what users apply (the cert-manager overlay, alone and
// with the reports and monitoring components; the Helm chart, with its defaults, with every
// component on, and with certificates of the user's, hooks included) is accepted by a real API server's validation
// and the CRDs of cert-manager and the Prometheus Operator, object by object, as
// `kubectl apply --server-side --dry-run=server` would.
func TestOverlaysPassServerSideDryRun(t *testing.T) {
	ctx := context.Background()
	certManager := moduleDir(t, "github.com/cert-manager/cert-manager")
	out, err := exec.Command("go", "mod", "download", "-json", prometheusOperator).Output()
	require.NoError(t, err, "downloading %s", prometheusOperator)
	var promOp struct{ Dir string }
	require.NoError(t, json.Unmarshal(out, &promOp))
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{
		filepath.Join(certManager, "deploy", "crds", "cert-manager.io_certificates.yaml"),
		filepath.Join(certManager, "deploy", "crds", "cert-manager.io_issuers.yaml"),
		filepath.Join(promOp.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_servicemonitors.yaml"),
		filepath.Join(promOp.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml"),
	}})
	require.NoError(t, err)
	cl, _ := newClient(t)
	// A dry run stores nothing, so the namespace the objects live in is created for real.
	require.NoError(t, client.IgnoreAlreadyExists(cl.Create(ctx, object(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: policyattachment-system}"))))

	renders := map[string][]*unstructured.Unstructured{}
	for _, dir := range []string{
		filepath.Join("..", "..", "deploy", "overlays", "cert-manager"),
		filepath.Join("..", "deploy", "testdata", "with-reports"),
		filepath.Join("..", "deploy", "testdata", "with-monitoring"),
	} {
		objs, err := deployrender.Kustomize(dir)
		require.NoError(t, err)
		renders[dir] = objs
	}
	chart := filepath.Join("..", "..", "deploy", "chart")
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"everything on": {
			"namespace": map[string]any{"create": true},
			"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true},
				"prometheusRule": map[string]any{"enabled": true}, "dashboard": map[string]any{"enabled": true}},
			"reports": map[string]any{"enabled": true},
		},
		"provided certificates": {"certificates": map[string]any{"certManager": map[string]any{"enabled": false},
			"provided": map[string]any{"caBundle": testCA(t), "existingSecret": "serving"}}},
	} {
		rendered, err := deployrender.Helm(chart, "policyattachment", "policyattachment-system", values)
		require.NoError(t, err, name)
		// The hooks too: Helm creates them at uninstall, through the same API server.
		renders["chart, "+name] = append(rendered.Objects, rendered.Hooks...)
	}
	for source, objs := range renders {
		for _, u := range objs {
			if strings.HasSuffix(u.GetKind(), "WebhookConfiguration") {
				// The cluster serves this suite's webhook under that name (with a URL); the
				// shipped configuration is judged on its own, not merged into that one.
				u.SetName(u.GetName() + "-dry-run")
			}
			err := cl.Patch(ctx, u, client.Apply, client.DryRunAll, client.FieldOwner("dry-run-test"), client.ForceOwnership)
			require.NoError(t, err, "%s: %s %s", source, u.GetKind(), u.GetName())
		}
		require.Greater(t, len(objs), 10, source)
	}
}

// testCA is a CA certificate's PEM, for a caBundle.
func testCA(t *testing.T) string {
	t.Helper()
	ca, err := certs.NewCA("dry-run-ca", time.Hour)
	require.NoError(t, err)
	return string(ca.CertPEM)
}

func moduleDir(t *testing.T, module string) string {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	require.NoError(t, err, module)
	return strings.TrimSpace(string(dir))
}
