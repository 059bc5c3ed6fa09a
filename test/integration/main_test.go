// Package integration runs the webhook in-process against a real kube-apiserver and etcd
// (controller-runtime's envtest), registered through real Validating- and
// MutatingWebhookConfigurations. `make test` builds the control plane once per machine and
// sets KUBEBUILDER_ASSETS.
package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

var (
	cluster *localcluster.Cluster
	cfg     *rest.Config
	baseURL string
	tlsConf *tls.Config
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("integration: KUBEBUILDER_ASSETS is not set; run `make test`, which builds the control plane")
		if os.Getenv("CI") != "" {
			os.Exit(1) // CI must never pass by skipping the real API server
		}
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	cluster, err = localcluster.Start(filepath.Join("..", "crds"))
	if err != nil {
		fmt.Println("integration:", err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()
	cfg, baseURL, tlsConf = cluster.Config, cluster.BaseURL, cluster.TLS
	// Claims on, as the Deployment runs: every test goes through them.
	cluster.ClaimNamespace = "policyattachment-system"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, err := cluster.StartWebhook(ctx, kinds.BuiltinKindTable(), testLogger())
	if err != nil {
		fmt.Println("integration:", err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Println("integration: the webhook server stopped with:", err)
		return 1
	}
	return code
}

// rotateServingCert issues a new leaf from the cluster's CA into the webhook's cert folder.
func rotateServingCert() error { return cluster.RotateServingCert() }

// testLogger logs to stderr when INTEGRATION_LOG is set, and discards otherwise.
func testLogger() logr.Logger {
	if os.Getenv("INTEGRATION_LOG") == "" {
		return logr.Discard()
	}
	return zap.New(zap.WriteTo(os.Stderr))
}
