// Package apiserver runs every scenario of the testdata corpus through a real kube-apiserver
// (controller-runtime's envtest) that holds the implementations' own CRDs, with their
// schemas and CEL rules (test/harness/testcrds: the module files of Gateway API, Envoy Gateway
// and Istio, and testdata/crds for the rest), and the webhook registered through the
// Validating- and MutatingWebhookConfigurations users install. Each policy goes through
// `kubectl apply --dry-run=server`, and its verdict must be the one `webhook check` gives
// offline with the same CRDs, and the scenario's `# expect:` line.
//
// The schemaless stand-ins of test/crds are not installed here: their names are the real
// CRDs' names. `make test` builds the control plane once per machine and sets
// KUBEBUILDER_ASSETS.
package apiserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/testcrds"
)

// repoRoot is the repository's root, from this package's folder.
var repoRoot = filepath.Join("..", "..")

var (
	cluster *localcluster.Cluster
	// crdFiles are the CRDs the control plane holds; `webhook check` is given the same.
	crdFiles []string
	// kubectl and webhookCLI are binaries; kubeconfig is the control plane's admin user.
	kubectl, webhookCLI, kubeconfig string
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("apiserver: KUBEBUILDER_ASSETS is not set; run `make test`, which builds the control plane")
		if os.Getenv("CI") != "" {
			os.Exit(1) // CI must never pass by skipping the real API server
		}
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	if crdFiles, err = testcrds.Files(ctx, repoRoot); err != nil {
		fmt.Println("apiserver:", err)
		return 1
	}
	// localcluster also installs Gateway API's experimental CRDs from the module go.mod
	// requires; envtest keeps one CRD of a name, so the same files given again are no second
	// install.
	if cluster, err = localcluster.Start(crdFiles...); err != nil {
		fmt.Println("apiserver:", err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()

	dir, err := os.MkdirTemp("", "apiserver-test-")
	if err != nil {
		fmt.Println("apiserver:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := setUpTools(dir); err != nil {
		fmt.Println("apiserver:", err)
		return 1
	}

	done, err := cluster.StartWebhook(ctx, kinds.BuiltinKindTable(), testLogger())
	if err != nil {
		fmt.Println("apiserver:", err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Println("apiserver: the webhook server stopped with:", err)
		return 1
	}
	return code
}

// setUpTools finds kubectl beside the control plane's binaries, builds the webhook CLI and
// writes a kubeconfig, all in dir.
func setUpTools(dir string) error {
	kubectl = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return fmt.Errorf("kubectl is not beside the control plane (hack/control-plane/control-plane.sh builds it): %w", err)
	}
	webhookCLI = filepath.Join(dir, "webhook")
	build := exec.Command("go", "build", "-o", webhookCLI, "./cmd/webhook")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the webhook CLI: %v: %s", err, out)
	}
	kubeconfig = filepath.Join(dir, "kubeconfig")
	return cluster.WriteKubeconfig(kubeconfig)
}

// testLogger logs to stderr when APISERVER_LOG is set, and discards otherwise.
func testLogger() logr.Logger {
	if os.Getenv("APISERVER_LOG") == "" {
		return logr.Discard()
	}
	return zap.New(zap.WriteTo(os.Stderr))
}
