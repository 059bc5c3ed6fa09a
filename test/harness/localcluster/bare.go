package localcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlane is a bare local kube-apiserver + etcd with CRDs and no webhook.
type ControlPlane struct {
	env *envtest.Environment
	*Cluster
}

// StartControlPlane starts kube-apiserver and etcd with the Gateway API CRDs and the CRDs
// under crdDirs, and nothing else: the caller registers the webhook itself.
func StartControlPlane(crdDirs ...string) (*ControlPlane, error) {
	env, err := newEnvironment(crdDirs, envtest.WebhookInstallOptions{})
	if err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	return &ControlPlane{env: env, Cluster: &Cluster{Config: cfg, env: env}}, nil
}

// newEnvironment describes a control plane with the Gateway API experimental CRDs, the
// CRDs under crdDirs and the given webhook configurations.
func newEnvironment(crdDirs []string, hooks envtest.WebhookInstallOptions) (*envtest.Environment, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `bash hack/control-plane/control-plane.sh` and export its output")
	}
	gatewayAPI, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating the gateway-api module: %w", err)
	}
	return &envtest.Environment{
		CRDDirectoryPaths:     append([]string{filepath.Join(strings.TrimSpace(string(gatewayAPI)), "config", "crd", "experimental")}, crdDirs...),
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: hooks,
	}, nil
}

// Stop stops the control plane.
func (c *ControlPlane) Stop() error { return c.env.Stop() }
