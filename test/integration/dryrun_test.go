package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// prometheusOperator is the release whose CRDs (ServiceMonitor, PrometheusRule) the
// monitoring component is checked against.
const prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// TestOverlaysPassServerSideDryRun: what users apply (the cert-manager overlay, alone and
// with the reports and monitoring components) is accepted by a real API server's validation
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

	for _, dir := range []string{
		filepath.Join("..", "..", "deploy", "overlays", "cert-manager"),
		filepath.Join("..", "deploy", "testdata", "with-reports"),
		filepath.Join("..", "deploy", "testdata", "with-monitoring"),
	} {
		rendered, err := exec.Command("kubectl", "kustomize", dir).CombinedOutput()
		require.NoError(t, err, string(rendered))
		dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(rendered)))
		applied := 0
		for {
			doc, err := dec.Read()
			if err != nil {
				break
			}
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(doc, &u.Object))
			if u.Object == nil {
				continue
			}
			if strings.HasSuffix(u.GetKind(), "WebhookConfiguration") {
				// The cluster serves this suite's webhook under that name (with a URL); the
				// shipped configuration is judged on its own, not merged into that one.
				u.SetName(u.GetName() + "-dry-run")
			}
			err = cl.Patch(ctx, u, client.Apply, client.DryRunAll, client.FieldOwner("dry-run-test"), client.ForceOwnership)
			require.NoError(t, err, "%s: %s %s", dir, u.GetKind(), u.GetName())
			applied++
		}
		require.Greater(t, applied, 10, dir)
	}
}

func moduleDir(t *testing.T, module string) string {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	require.NoError(t, err, module)
	return strings.TrimSpace(string(dir))
}
