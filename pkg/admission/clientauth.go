package admission

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
)

// ClientAuth is who may call the HTTPS port: only callers presenting a certificate that CAs
// signed, carrying one of Names when any are given. The API server presents one when its
// AdmissionConfiguration gives it a kubeconfig for this webhook (README, "Only the API
// server's reviews count"); a review forged straight to a pod then fails the handshake and
// is never read.
type ClientAuth struct {
	CAs *x509.CertPool
	// Names the certificate must carry one of, as its common name or a DNS name; empty: any.
	Names []string
}

// LoadClientAuth reads the CA bundle at caFile; no file is no client authentication (nil).
func LoadClientAuth(caFile string, names []string) (*ClientAuth, error) {
	if caFile == "" {
		if len(names) > 0 {
			return nil, errors.New("--client-cert-name needs --client-ca-file: the names are checked on certificates that CA signed")
		}
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca-file: %s holds no PEM certificate", caFile)
	}
	return &ClientAuth{CAs: pool, Names: names}, nil
}

// configure makes c require and verify a client certificate.
func (a *ClientAuth) configure(c *tls.Config) {
	c.ClientCAs = a.CAs
	c.ClientAuth = tls.RequireAndVerifyClientCert
	if len(a.Names) == 0 {
		return
	}
	names := a.Names
	c.VerifyConnection = func(s tls.ConnectionState) error {
		if len(s.PeerCertificates) == 0 {
			return errors.New("no client certificate")
		}
		leaf := s.PeerCertificates[0]
		if slices.Contains(names, leaf.Subject.CommonName) || slices.ContainsFunc(leaf.DNSNames, func(n string) bool { return slices.Contains(names, n) }) {
			return nil
		}
		return fmt.Errorf("client certificate %q is not one of --client-cert-name %v", leaf.Subject.CommonName, names)
	}
}
