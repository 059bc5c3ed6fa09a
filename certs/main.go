// Command certs makes a CA and a serving certificate for the webhook's Service, for
// clusters without cert-manager:
//
//	go run ./certs [-out deploy/overlays/plain-certs/out] [-namespace policyattachment-system]
//	               [-service policyattachment-webhook] [-days 365]
//
// It writes ca.crt, tls.crt, tls.key and cabundle-patch.yaml (the caBundle of both webhook
// configurations) into -out, which the plain-certs overlay reads. Keep ca.crt; the CA key
// is not written, so each run makes a new CA and the patch must be re-applied with it.
package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/policyattachment/webhook/pkg/certs"
)

func main() {
	out := flag.String("out", filepath.Join("deploy", "overlays", "plain-certs", "out"), "folder to write into")
	namespace := flag.String("namespace", "policyattachment-system", "namespace of the webhook's Service")
	service := flag.String("service", "policyattachment-webhook", "name of the webhook's Service")
	days := flag.Int("days", 365, "validity of the serving certificate, in days")
	flag.Parse()
	if err := run(*out, *namespace, *service, time.Duration(*days)*24*time.Hour); err != nil {
		fmt.Fprintln(os.Stderr, "certs:", err)
		os.Exit(1)
	}
}

func run(out, namespace, service string, validity time.Duration) error {
	ca, err := certs.NewCA("policyattachment-ca", 10*365*24*time.Hour)
	if err != nil {
		return err
	}
	names := []string{
		fmt.Sprintf("%s.%s.svc", service, namespace),
		fmt.Sprintf("%s.%s.svc.cluster.local", service, namespace),
	}
	certPEM, keyPEM, err := ca.Issue(names, nil, validity)
	if err != nil {
		return err
	}
	if err := certs.WriteKeyPair(out, certPEM, keyPEM); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "ca.crt"), ca.CertPEM, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "cabundle-patch.yaml"), []byte(caBundlePatch(ca.CertPEM)), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s/{ca.crt,tls.crt,tls.key,cabundle-patch.yaml} for %s (valid %s)\n", out, names[0], validity)
	return nil
}

// caBundlePatch sets the CA on every webhook of both configurations (strategic merge by
// webhook name).
func caBundlePatch(caPEM []byte) string {
	b := base64.StdEncoding.EncodeToString(caPEM)
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: policyattachment
webhooks:
- name: validate.policyattachment.io
  clientConfig:
    caBundle: %[1]s
- name: namespaces.policyattachment.io
  clientConfig:
    caBundle: %[1]s
- name: targets.policyattachment.io
  clientConfig:
    caBundle: %[1]s
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: policyattachment
webhooks:
- name: mutate.policyattachment.io
  clientConfig:
    caBundle: %[1]s
`, b)
}
