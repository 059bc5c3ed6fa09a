// Package localcluster runs a real local control plane (kube-apiserver + etcd through
// controller-runtime's envtest) with the Gateway API CRDs, the test policy CRDs and the
// webhook configurations, and the webhook in-process. The integration tests and `make run`
// share it.
package localcluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Webhook names, as kubectl prints them in denials.
const (
	ValidatingName = "validate.policyattachment.io"
	MutatingName   = "mutate.policyattachment.io"
	configName     = "policyattachment"
)

// Cluster is a running local control plane with the webhook configurations installed.
type Cluster struct {
	Config  *rest.Config
	BaseURL string      // https://host:port of the webhook
	TLS     *tls.Config // trusts the webhook's CA
	// MetricsURL is the webhook's /metrics, served over HTTPS to tokens the API server says
	// may get it (ScrapeMetrics reads it so); ProbeURL is the plain-HTTP base URL of the
	// probes. StartWebhook sets both.
	MetricsURL, ProbeURL string
	// NoLiveReads starts the webhook judging on its cache alone.
	NoLiveReads bool
	// AuditInterval is the webhook's periodic audit (the first runs once it is ready);
	// 5 minutes when zero, as `webhook serve` defaults to.
	AuditInterval time.Duration
	// ClientAuth is what the webhook asks of its callers (StartAuthenticated sets it).
	ClientAuth *admission.ClientAuth
	// ClaimNamespace turns claims across replicas on (`webhook serve --claim-namespace`);
	// StartWebhook creates the namespace.
	ClaimNamespace string

	env      *envtest.Environment // nil when attached to an existing cluster
	attached bool
	ca       *certs.CA
	certDir  string
	host     string
	port     int

	// The token ScrapeMetrics reads /metrics with, requested once.
	scraperOnce  sync.Once
	scraperToken string
	scraperErr   error
}

// Start starts kube-apiserver and etcd from KUBEBUILDER_ASSETS, installs the CRDs found
// under crdDirs (plus the Gateway API experimental CRDs) and the webhook configurations,
// and writes serving certificates from a fresh CA.
func Start(crdDirs ...string) (*Cluster, error) { return start(crdDirs, nil) }

// start is Start, with configure (when given) changing the environment before it starts.
func start(crdDirs []string, configure func(*envtest.Environment)) (*Cluster, error) {
	v, m, err := deployedWebhooks()
	if err != nil {
		return nil, err
	}
	forEnvtest(v, m)
	env, err := newEnvironment(crdDirs, envtest.WebhookInstallOptions{
		ValidatingWebhooks: []*admissionregv1.ValidatingWebhookConfiguration{v},
		MutatingWebhooks:   []*admissionregv1.MutatingWebhookConfiguration{m},
	})
	if err != nil {
		return nil, err
	}
	if configure != nil {
		configure(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c := &Cluster{Config: cfg, env: env, certDir: env.WebhookInstallOptions.LocalServingCertDir,
		host: env.WebhookInstallOptions.LocalServingHost, port: env.WebhookInstallOptions.LocalServingPort}
	c.BaseURL = "https://" + net.JoinHostPort(c.host, strconv.Itoa(c.port))
	// Our own CA, as cert-manager would run it: the CA stays, the leaf may rotate.
	if c.ca, err = certs.NewCA("policyattachment-local-ca", 24*time.Hour); err != nil {
		return nil, c.stopWith(fmt.Errorf("making a CA: %w", err))
	}
	if err := c.RotateServingCert(); err != nil {
		return nil, c.stopWith(err)
	}
	if err := c.trustCA(); err != nil {
		return nil, c.stopWith(fmt.Errorf("setting the webhooks' caBundle: %w", err))
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.ca.CertPEM)
	c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return c, nil
}

func (c *Cluster) stopWith(err error) error {
	_ = c.env.Stop()
	return err
}

// Stop stops the control plane, or detaches from an existing cluster.
func (c *Cluster) Stop() error {
	if c.attached {
		return c.Detach()
	}
	return c.env.Stop()
}

// StartWebhook runs the webhook in-process and waits until it is ready. The returned
// channel yields Start's result once ctx ends.
func (c *Cluster) StartWebhook(ctx context.Context, table *kinds.KindTable, log logr.Logger) (<-chan error, error) {
	ctrllog.SetLogger(log) // controller-runtime's own components (certwatcher) log through it
	metricsPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	probePort, err := FreePort()
	if err != nil {
		return nil, err
	}
	c.MetricsURL = fmt.Sprintf("https://127.0.0.1:%d%s", metricsPort, admission.PathMetrics)
	c.ProbeURL = fmt.Sprintf("http://127.0.0.1:%d", probePort)
	if err := c.createClaimNamespace(); err != nil {
		return nil, err
	}
	srv, err := admission.NewServer(c.Config, c.serverOptions(c.port, table, log, "replica-0",
		fmt.Sprintf("127.0.0.1:%d", metricsPort), fmt.Sprintf("127.0.0.1:%d", probePort)))
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: c.TLS}, Timeout: time.Second}
	return done, WaitReady(hc, c.BaseURL+admission.PathReadyz, 30*time.Second)
}

// StartReplica runs one more webhook in-process, with a store of its own, on port (a free
// one when 0), as another replica of the Deployment would; it serves the cluster's serving
// certificate. It returns the replica's base URL and, once ctx ends, Start's result.
func (c *Cluster) StartReplica(ctx context.Context, table *kinds.KindTable, log logr.Logger, name string, port int) (string, <-chan error, error) {
	return c.StartReplicaWith(ctx, table, log, name, port, nil)
}

// StartReplicaWith is StartReplica with its options, and a copy of the cluster's client
// config it reaches the API server with, changed by configure (when given) before it starts.
func (c *Cluster) StartReplicaWith(ctx context.Context, table *kinds.KindTable, log logr.Logger, name string, port int, configure func(*admission.Options, *rest.Config)) (string, <-chan error, error) {
	if port == 0 {
		var err error
		if port, err = FreePort(); err != nil {
			return "", nil, err
		}
	}
	opts, cfg := c.serverOptions(port, table, log, name, "0", "0"), rest.CopyConfig(c.Config)
	if configure != nil {
		configure(&opts, cfg)
	}
	srv, err := admission.NewServer(cfg, opts)
	if err != nil {
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	url := "https://" + net.JoinHostPort(c.host, strconv.Itoa(port))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: c.TLS}, Timeout: time.Second}
	return url, done, WaitReady(hc, url+admission.PathReadyz, 30*time.Second)
}

func (c *Cluster) serverOptions(port int, table *kinds.KindTable, log logr.Logger, replica, metrics, probes string) admission.Options {
	return admission.Options{Host: c.host, Port: port, CertDir: c.certDir, Table: table, Log: log,
		NoLiveReads: c.NoLiveReads, AuditInterval: cmp.Or(c.AuditInterval, 5*time.Minute),
		MetricsAddress: metrics, ProbeAddress: probes, ClaimNamespace: c.ClaimNamespace, Replica: replica,
		ClientAuth: c.ClientAuth}
}

// createClaimNamespace creates the namespace claims live in, when claims are on.
func (c *Cluster) createClaimNamespace() error {
	if c.ClaimNamespace == "" {
		return nil
	}
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ClaimNamespace}}
	if err := cl.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the claims' namespace: %w", err)
	}
	return nil
}

// ServingCertDir is the folder of the webhook's serving certificate (tls.crt, tls.key), for
// a replica run as a process.
func (c *Cluster) ServingCertDir() string { return c.certDir }

// TLSCertificate is the cluster's current serving certificate (for a proxy in front of
// replicas).
func (c *Cluster) TLSCertificate() (tls.Certificate, error) {
	return tls.LoadX509KeyPair(filepath.Join(c.certDir, "tls.crt"), filepath.Join(c.certDir, "tls.key"))
}

// SetWebhookURL points every webhook of the two configurations at base (a proxy), and
// returns a function that points them back.
func (c *Cluster) SetWebhookURL(base string) (restore func() error, err error) {
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		return nil, err
	}
	repoint := func(to string) error {
		return editClientConfigs(cl, func(cc *admissionregv1.WebhookClientConfig) { cc.URL = rebase(cc.URL, to) })
	}
	if err := repoint(base); err != nil {
		return nil, err
	}
	return func() error { return repoint(c.BaseURL) }, nil
}

// rebase keeps a URL's path on another base.
func rebase(url *string, base string) *string {
	if url == nil {
		return nil
	}
	rest := *url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	path := ""
	if i := strings.Index(rest, "/"); i >= 0 {
		path = rest[i:]
	}
	out := base + path
	return &out
}

// RotateServingCert issues a new serving certificate from the cluster's CA.
func (c *Cluster) RotateServingCert() error {
	certPEM, keyPEM, err := c.ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP(c.host)}, 24*time.Hour)
	if err != nil {
		return fmt.Errorf("issuing a serving certificate: %w", err)
	}
	return certs.WriteKeyPair(c.certDir, certPEM, keyPEM)
}

// WriteKubeconfig writes a kubeconfig for the cluster's admin user.
func (c *Cluster) WriteKubeconfig(path string) error {
	if c.env == nil {
		return fmt.Errorf("attached to an existing cluster: use its own kubeconfig")
	}
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: "local-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	// The kubeconfig's own folder is private; those above it are not (certs.MkdirPrivate).
	if err := certs.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func (c *Cluster) trustCA() error {
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		return err
	}
	return editClientConfigs(cl, func(cc *admissionregv1.WebhookClientConfig) { cc.CABundle = c.ca.CertPEM })
}

// editClientConfigs applies edit to every webhook's clientConfig in both configurations.
func editClientConfigs(cl client.Client, edit func(*admissionregv1.WebhookClientConfig)) error {
	ctx := context.Background()
	v := &admissionregv1.ValidatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: configName}, v); err != nil {
		return err
	}
	for i := range v.Webhooks {
		edit(&v.Webhooks[i].ClientConfig)
	}
	if err := cl.Update(ctx, v); err != nil {
		return err
	}
	m := &admissionregv1.MutatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: configName}, m); err != nil {
		return err
	}
	for i := range m.Webhooks {
		edit(&m.Webhooks[i].ClientConfig)
	}
	return cl.Update(ctx, m)
}
