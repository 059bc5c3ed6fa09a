package certs

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"syscall"
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

// TestMkdirPrivate: only the last folder is private; those it creates above it are not
// (make run's kubeconfig in .local/kube must leave .local readable for the docs site), and
// a folder that exists keeps its mode.
func TestMkdirPrivate(t *testing.T) {
	umask := syscall.Umask(0o022)
	defer syscall.Umask(umask)
	root := t.TempDir()
	existing := filepath.Join(root, "existing")
	require.NoError(t, os.Mkdir(existing, 0o750))
	require.NoError(t, os.Chmod(existing, 0o750))

	require.NoError(t, MkdirPrivate(filepath.Join(root, ".local", "kube")))
	require.NoError(t, MkdirPrivate(existing))
	require.NoError(t, WriteKeyPair(filepath.Join(root, "a", "b", "certs"), []byte("cert"), []byte("key")))

	modes := map[string]os.FileMode{}
	for _, dir := range []string{".local", ".local/kube", "existing", "a", "a/b", "a/b/certs"} {
		info, err := os.Stat(filepath.Join(root, dir))
		require.NoError(t, err)
		modes[dir] = info.Mode().Perm()
	}
	assert.Equal(t, map[string]os.FileMode{
		".local": 0o755, ".local/kube": 0o700, "existing": 0o750, "a": 0o755, "a/b": 0o755, "a/b/certs": 0o700,
	}, modes)
}
