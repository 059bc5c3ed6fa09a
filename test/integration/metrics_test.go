package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/deployrender"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

// TestMetricsNeedATokenThatMayReadThem: the metrics port answers only over HTTPS, and only
// callers the API server vouches for: without a token 401, with a token the API server does
// not accept 500, with the token of a ServiceAccount that may not get /metrics 403,
// with one bound to the shipped ClusterRole policyattachment-metrics-reader 200 and the
// webhook's metrics, as Prometheus' scrape with the ServiceMonitor's bearer token gets them.
func TestMetricsNeedATokenThatMayReadThem(t *testing.T) {
	ctx := context.Background()
	code, body, err := cluster.GetMetrics(cluster.MetricsURL, "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.NotContains(t, body, "policyattachment_")

	resp, err := http.Get(strings.Replace(cluster.MetricsURL, "https://", "http://", 1))
	require.NoError(t, err)
	plain, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP gets Go's answer to a client that spoke HTTP to an HTTPS server")
	assert.NotContains(t, string(plain), "policyattachment_")

	code, body, err = cluster.GetMetrics(cluster.MetricsURL, "not-a-token")
	require.NoError(t, err)
	// controller-runtime's filter answers a token the API server rejects with 500
	// "Authentication failed" (the TokenReview's error), not 401; either way, no metrics.
	assert.Equal(t, http.StatusInternalServerError, code, body)
	assert.Equal(t, "Authentication failed\n", body)

	nobody, err := cluster.ServiceAccountToken(ctx, "default", "metrics-nobody", false)
	require.NoError(t, err)
	code, body, err = cluster.GetMetrics(cluster.MetricsURL, nobody)
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Equal(t, "Authorization denied for user system:serviceaccount:default:metrics-nobody\n", body)

	reader, err := cluster.ServiceAccountToken(ctx, "default", "metrics-reader", true)
	require.NoError(t, err)
	code, body, err = cluster.GetMetrics(cluster.MetricsURL, reader)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "# TYPE policyattachment_reviews_in_flight gauge")
}

// TestMetricsAuthWithTheShippedRBAC: a webhook that runs as its ServiceAccount with nothing
// but the roles the base ships (deploy/chart/files/rbac) may have the API server review its
// metrics callers' tokens and permissions: a reader's token gets 200, another's 403. Without
// the role policyattachment-webhook-metrics-auth it could ask neither, and would answer 500.
func TestMetricsAuthWithTheShippedRBAC(t *testing.T) {
	ctx := context.Background()
	cl, _ := newClient(t)
	objs, err := deployrender.Kustomize(filepath.Join("..", "..", "deploy", "base"))
	require.NoError(t, err)
	applied := 0
	for _, u := range objs {
		if u.GetAPIVersion() == "rbac.authorization.k8s.io/v1" {
			require.NoError(t, client.IgnoreAlreadyExists(cl.Create(ctx, u)), "%s %s", u.GetKind(), u.GetName())
			applied++
		}
	}
	require.Greater(t, applied, 4)

	// The webhook as its ServiceAccount, as the Deployment runs it.
	const sa = "system:serviceaccount:policyattachment-system:policyattachment-webhook"
	asWebhook := rest.CopyConfig(cfg)
	asWebhook.Impersonate = rest.ImpersonationConfig{UserName: sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:policyattachment-system", "system:authenticated"}}
	ca, err := certs.NewCA("metrics-rbac-test", time.Hour)
	require.NoError(t, err)
	leaf, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	require.NoError(t, err)
	certDir := t.TempDir()
	require.NoError(t, certs.WriteKeyPair(certDir, leaf, key))
	port, err := localcluster.FreePort()
	require.NoError(t, err)
	metricsPort, err := localcluster.FreePort()
	require.NoError(t, err)
	srv, err := admission.NewServer(asWebhook, admission.Options{Host: "127.0.0.1", Port: port, CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Log: logr.Discard(), NoLiveReads: true,
		MetricsAddress: fmt.Sprintf("127.0.0.1:%d", metricsPort), ProbeAddress: "0"})
	require.NoError(t, err)
	serving, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(serving) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}}}
	get := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", metricsPort, admission.PathMetrics), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		var resp *http.Response
		require.Eventually(t, func() bool {
			resp, err = hc.Do(req)
			return err == nil
		}, 30*time.Second, 50*time.Millisecond, "the metrics port listens")
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	reader, err := cluster.ServiceAccountToken(ctx, "default", "metrics-reader", true)
	require.NoError(t, err)
	code, body := get(reader)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "# TYPE policyattachment_reviews_in_flight gauge")
	nobody, err := cluster.ServiceAccountToken(ctx, "default", "metrics-nobody", false)
	require.NoError(t, err)
	code, body = get(nobody)
	assert.Equal(t, http.StatusForbidden, code, body)
}
