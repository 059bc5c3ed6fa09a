package admission

import (
	"context"
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

// TestStaticServerServesProbesAndMetricsApart: `serve --snapshot-from` answers the probes
// and /metrics on their own plain-HTTP addresses, as a cluster-backed serve does.
func TestStaticServerServesProbesAndMetricsApart(t *testing.T) {
	certDir := t.TempDir()
	ca, err := certs.NewCA("static-test", time.Hour)
	require.NoError(t, err)
	cert, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, certs.WriteKeyPair(certDir, cert, key))
	_, port, err := net.SplitHostPort(freeAddress(t))
	require.NoError(t, err)
	portNumber, err := strconv.Atoi(port)
	require.NoError(t, err)
	probes, metrics := freeAddress(t), freeAddress(t)
	srv := NewStaticServer(index.New(), Options{Host: "127.0.0.1", Port: portNumber, CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Log: logr.Discard(), ProbeAddress: probes, MetricsAddress: metrics})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

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
	code, body := get("http://" + probes + PathReadyz)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, body = get("http://" + metrics + PathMetrics)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "# TYPE policyattachment_reviews_in_flight gauge")

	cancel()
	require.NoError(t, <-done, "every server stops when the context ends")
}
