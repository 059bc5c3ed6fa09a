package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/policyattachment/webhook/pkg/certs"
)

// Attach prepares an existing cluster (the one cfg reaches) for a webhook served from this
// machine at host:port: it installs the CRDs under crdDirs, writes serving certificates
// from a fresh CA into certDir, and registers webhook configurations whose URL is
// https://host:port. The API server must be able to reach host:port. Detach removes the
// configurations again.
func Attach(cfg *rest.Config, host string, port int, certDir string, crdDirs ...string) (*Cluster, error) {
	if len(crdDirs) > 0 {
		if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: crdDirs, ErrorIfPathMissing: true}); err != nil {
			return nil, fmt.Errorf("installing CRDs: %w", err)
		}
	}
	c := &Cluster{Config: cfg, certDir: certDir, host: host, port: port}
	c.BaseURL = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	var err error
	if c.ca, err = certs.NewCA("policyattachment-local-ca", 24*time.Hour); err != nil {
		return nil, err
	}
	if err := c.RotateServingCert(); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.ca.CertPEM)
	c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}

	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	v, m, err := deployedWebhooks()
	if err != nil {
		return nil, err
	}
	for i := range v.Webhooks {
		v.Webhooks[i].ClientConfig = c.urlConfig(v.Webhooks[i].ClientConfig)
	}
	for i := range m.Webhooks {
		m.Webhooks[i].ClientConfig = c.urlConfig(m.Webhooks[i].ClientConfig)
	}
	ctx := context.Background()
	for _, obj := range []client.Object{v, m} {
		if err := cl.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("registering %s: %w", obj.GetName(), err)
		}
	}
	c.attached = true
	return c, nil
}

// urlConfig points a webhook at this machine, trusting the CA.
func (c *Cluster) urlConfig(cc admissionregv1.WebhookClientConfig) admissionregv1.WebhookClientConfig {
	url := c.BaseURL + "/" + strings.TrimPrefix(*cc.Service.Path, "/")
	return admissionregv1.WebhookClientConfig{URL: &url, CABundle: c.ca.CertPEM}
}

// Detach removes the webhook configurations Attach registered.
func (c *Cluster) Detach() error {
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, obj := range []client.Object{
		&admissionregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}},
		&admissionregv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configName}},
	} {
		if err := cl.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// DefaultCertDir is where Attach's certificates go in a checkout.
var DefaultCertDir = filepath.Join(".local", "certs")
