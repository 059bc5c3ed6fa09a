// Package integration runs the webhook in-process against a real kube-apiserver and etcd
// (controller-runtime's envtest), registered through a real ValidatingWebhookConfiguration.
// `make test` builds the control plane once per machine and sets KUBEBUILDER_ASSETS.
package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/rules"
)

// WebhookName is the name kubectl prints in denials.
const WebhookName = "validate.policyattachment.io"

var (
	cfg       *rest.Config
	baseURL   string
	tlsConf   *tls.Config
	servingCA *certs.CA
	certDir   string
	serveHost string
)

// rotateServingCert issues a new leaf from the test CA into the server's cert folder.
func rotateServingCert() error {
	certPEM, keyPEM, err := servingCA.Issue([]string{"localhost"}, []net.IP{net.ParseIP(serveHost)}, time.Hour)
	if err != nil {
		return fmt.Errorf("issuing a serving certificate: %w", err)
	}
	return certs.WriteKeyPair(certDir, certPEM, keyPEM)
}

// trustCA sets the caBundle of both webhook configurations.
func trustCA(caPEM []byte) error {
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	v := &admissionregv1.ValidatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: "policyattachment"}, v); err != nil {
		return err
	}
	for i := range v.Webhooks {
		v.Webhooks[i].ClientConfig.CABundle = caPEM
	}
	if err := cl.Update(ctx, v); err != nil {
		return err
	}
	m := &admissionregv1.MutatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: "policyattachment"}, m); err != nil {
		return err
	}
	for i := range m.Webhooks {
		m.Webhooks[i].ClientConfig.CABundle = caPEM
	}
	return cl.Update(ctx, m)
}

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
	gatewayAPI, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		fmt.Println("integration: locating the gateway-api module:", err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join(strings.TrimSpace(string(gatewayAPI)), "config", "crd", "experimental"),
			filepath.Join("..", "crds"),
		},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregv1.ValidatingWebhookConfiguration{validatingConfig()},
			MutatingWebhooks:   []*admissionregv1.MutatingWebhookConfiguration{mutatingConfig()},
		},
	}
	cfg, err = env.Start()
	if err != nil {
		fmt.Println("integration: starting kube-apiserver and etcd:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	opts := env.WebhookInstallOptions
	// Serve with certificates from our own CA, as cert-manager would: the CA stays, the
	// leaf rotates (TestCertRotation).
	if servingCA, err = certs.NewCA("policyattachment-test-ca", time.Hour); err != nil {
		fmt.Println("integration: making a CA:", err)
		return 1
	}
	certDir = opts.LocalServingCertDir
	serveHost = opts.LocalServingHost
	if err := rotateServingCert(); err != nil {
		fmt.Println("integration:", err)
		return 1
	}
	if err := trustCA(servingCA.CertPEM); err != nil {
		fmt.Println("integration: setting the webhooks' caBundle:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := admission.NewServer(cfg, admission.Options{
		Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		Table: rules.BuiltinKindTable(), Log: testLogger(),
	})
	if err != nil {
		fmt.Println("integration: creating the webhook server:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(servingCA.CertPEM)
	tlsConf = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	baseURL = "https://" + net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	if err := waitReady(); err != nil {
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

func waitReady() error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		resp, err := c.Get(baseURL + admission.PathReadyz)
		last = err
		if err == nil {
			last = fmt.Errorf("status %s", resp.Status)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the webhook was not ready within 30s: %v", last)
}

// mutatingConfig registers /mutate: Ignore, because an annotation is never worth a failed write.
func mutatingConfig() *admissionregv1.MutatingWebhookConfiguration {
	ignore := admissionregv1.Ignore
	none := admissionregv1.SideEffectClassNone
	ifNeeded := admissionregv1.IfNeededReinvocationPolicy
	path := strings.TrimPrefix(admission.PathMutate, "/")
	timeout := int32(5)
	return &admissionregv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "policyattachment"},
		Webhooks: []admissionregv1.MutatingWebhook{{
			Name:                    "mutate.policyattachment.io",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			ReinvocationPolicy:      &ifNeeded,
			TimeoutSeconds:          &timeout,
			ClientConfig: admissionregv1.WebhookClientConfig{
				Service: &admissionregv1.ServiceReference{Namespace: "policyattachment-system", Name: "webhook", Path: &path},
			},
			Rules: policyRules(),
		}},
	}
}

func policyRules() []admissionregv1.RuleWithOperations {
	return []admissionregv1.RuleWithOperations{{
		Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
		Rule: admissionregv1.Rule{
			APIGroups:   []string{"policies.controller.io", "gateway.networking.k8s.io"},
			APIVersions: []string{"*"},
			Resources:   []string{"colorpolicies", "backendtlspolicies"},
		},
	}}
}

// validatingConfig registers /validate for the policy kinds the tests create.
func validatingConfig() *admissionregv1.ValidatingWebhookConfiguration {
	fail := admissionregv1.Fail
	none := admissionregv1.SideEffectClassNone
	path := strings.TrimPrefix(admission.PathValidate, "/") // envtest joins host and path with "/"
	timeout := int32(5)
	return &admissionregv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "policyattachment"},
		Webhooks: []admissionregv1.ValidatingWebhook{{
			Name:                    WebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			TimeoutSeconds:          &timeout,
			ClientConfig: admissionregv1.WebhookClientConfig{
				Service: &admissionregv1.ServiceReference{Namespace: "policyattachment-system", Name: "webhook", Path: &path},
			},
			Rules: append(policyRules(), deleteRules()),
		}},
	}
}

// testLogger logs to stderr when INTEGRATION_LOG is set, and discards otherwise.
func testLogger() logr.Logger {
	if os.Getenv("INTEGRATION_LOG") == "" {
		return logr.Discard()
	}
	return zap.New(zap.WriteTo(os.Stderr))
}

// deleteRules let deletions of policies and ReferenceGrants carry their impact warnings.
func deleteRules() admissionregv1.RuleWithOperations {
	return admissionregv1.RuleWithOperations{
		Operations: []admissionregv1.OperationType{admissionregv1.Delete},
		Rule: admissionregv1.Rule{
			APIGroups:   []string{"policies.controller.io", "gateway.networking.k8s.io"},
			APIVersions: []string{"*"},
			Resources:   []string{"colorpolicies", "backendtlspolicies", "referencegrants"},
		},
	}
}
