package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// freeAddress is a loopback address no one listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// servingCert writes a serving certificate for 127.0.0.1 into a new folder, and returns the
// folder and a client configuration that trusts it.
func servingCert(t *testing.T) (string, *tls.Config) {
	t.Helper()
	certDir := t.TempDir()
	ca, err := certs.NewCA("static-test", time.Hour)
	require.NoError(t, err)
	cert, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, certs.WriteKeyPair(certDir, cert, key))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	return certDir, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
}

// freePort is a loopback port no one listens on.
func freePort(t *testing.T) int {
	t.Helper()
	_, port, err := net.SplitHostPort(freeAddress(t))
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return n
}

// TestStaticServerServesProbesAndMetricsApart: `serve --snapshot-from` answers the probes
// and, told to serve them without authentication (it has no API server to ask), /metrics on
// their own plain-HTTP addresses, as a cluster-backed serve does; the HTTPS review port
// answers the probes and never /metrics.
func TestStaticServerServesProbesAndMetricsApart(t *testing.T) {
	certDir, clientTLS := servingCert(t)
	portNumber := freePort(t)
	probes, metrics := freeAddress(t), freeAddress(t)
	srv := NewStaticServer(index.New(), Options{Host: "127.0.0.1", Port: portNumber, CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Log: logr.Discard(), ProbeAddress: probes, MetricsAddress: metrics, InsecureMetrics: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	var err error
	get := func(url string) (int, string) {
		var resp *http.Response
		require.Eventually(t, func() bool {
			resp, err = http.Get(url)
			return err == nil
		}, 10*time.Second, 20*time.Millisecond, url)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	hooks := "https://127.0.0.1:" + strconv.Itoa(portNumber)
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = https.Get(hooks + PathReadyz)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the review port answers the probes")
	resp, err = https.Get(hooks + PathMetrics)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the review port serves no /metrics")
	assert.NotContains(t, string(page), "policyattachment_")

	code, body := get("http://" + probes + PathReadyz)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, body = get("http://" + metrics + PathMetrics)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "# TYPE policyattachment_reviews_in_flight gauge")

	cancel()
	require.NoError(t, <-done, "every server stops when the context ends")
}

// TestStaticServerRefusesUnauthenticatedMetricsUnlessTold: without an API server to
// authenticate and authorize the callers of /metrics, a static serve with a metrics address
// does not start unless told to serve them to anyone (`--metrics-secure=false`).
func TestStaticServerRefusesUnauthenticatedMetricsUnlessTold(t *testing.T) {
	certDir, _ := servingCert(t)
	srv := NewStaticServer(index.New(), Options{Host: "127.0.0.1", Port: freePort(t), CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Log: logr.Discard(), MetricsAddress: freeAddress(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Start(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--metrics-secure=false")
	assert.NoError(t, ctx.Err(), "it refused at once")
}
