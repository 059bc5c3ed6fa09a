package localcluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/certs"
)

// APIServerClientName is the name on the client certificate the API server of
// StartAuthenticated presents to webhooks, and the one the webhook requires.
const APIServerClientName = "policyattachment-apiserver"

// ClientCA is the CA that signs the API server's client certificate; tests issue the
// certificates of other callers from it.
type ClientCA struct{ *certs.CA }

// StartAuthenticated is Start with the API server presenting a client certificate to the
// webhooks, as README's "Only the API server's reviews count" sets it up: an
// AdmissionConfiguration whose kubeconfig gives both admission plugins a certificate signed
// by a CA of the webhook's own, named APIServerClientName. The webhook it starts requires
// that certificate; the cluster's own client (TLS) carries another of that CA's, so the
// harness may still ask for readiness.
func StartAuthenticated(crdDirs ...string) (*Cluster, *ClientCA, error) {
	ca, err := certs.NewCA("policyattachment-client-ca", 24*time.Hour)
	if err != nil {
		return nil, nil, fmt.Errorf("making the client CA: %w", err)
	}
	dir, err := os.MkdirTemp("", "policyattachment-apiserver-client-")
	if err != nil {
		return nil, nil, err
	}
	certPEM, keyPEM, err := ca.IssueClient(APIServerClientName, nil, 24*time.Hour)
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{
		"client.crt": string(certPEM),
		"client.key": string(keyPEM),
		// "*" is the API server's default entry: every webhook it calls gets this identity
		// (a Deployment's webhook is named by its Service, <name>.<namespace>.svc).
		"kubeconfig": fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %[1]s
    client-key: %[2]s
`, filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")),
		"admission.yaml": fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
`, filepath.Join(dir, "kubeconfig")),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, nil, err
		}
	}
	c, err := start(crdDirs, func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Append("admission-control-config-file", filepath.Join(dir, "admission.yaml"))
	})
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	c.ClientAuth = &admission.ClientAuth{CAs: pool, Names: []string{APIServerClientName}}
	harnessCert, harnessKey, err := ca.IssueClient(APIServerClientName, nil, 24*time.Hour)
	if err != nil {
		return nil, nil, c.stopWith(err)
	}
	pair, err := tls.X509KeyPair(harnessCert, harnessKey)
	if err != nil {
		return nil, nil, c.stopWith(err)
	}
	c.TLS.Certificates = []tls.Certificate{pair}
	return c, &ClientCA{ca}, nil
}
