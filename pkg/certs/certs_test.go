package certs

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIssuedCertificateVerifiesAgainstCA(t *testing.T) {
	ca, err := NewCA("policyattachment-ca", time.Hour)
	require.NoError(t, err)
	certPEM, keyPEM, err := ca.Issue([]string{"webhook.policyattachment-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.CertPEM))
	for _, name := range []string{"webhook.policyattachment-system.svc", "127.0.0.1"} {
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		assert.NoError(t, err, name)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "other.svc"})
	assert.Error(t, err)

	dir := filepath.Join(t.TempDir(), "certs")
	require.NoError(t, WriteKeyPair(dir, certPEM, keyPEM))
	got, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	require.NoError(t, err)
	assert.Equal(t, certPEM, got)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary files are left behind")
}
