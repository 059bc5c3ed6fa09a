// Command nodepki writes the certificates and kubeconfigs of the real one-node cluster
// `make e2e-node` brings up (hack/realnode/realnode.sh): a CA; the API server's serving certificate
// (the node IP, the kubernetes Service's first IP and names); the kubelet's; client
// certificates for the API server's calls to the kubelet, the admin, the controller manager,
// the scheduler, the kubelet and kube-proxy, each with a kubeconfig; the service account
// signing key; and the client certificate the API server presents to webhooks, with the
// AdmissionConfiguration that gives it to them.
//
//	go run ./hack/realnode/nodepki -dir DIR -node-ip 10.250.0.2 -node NAME
//
// An existing DIR/ca.crt is kept: running it again changes nothing.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/policyattachment/webhook/pkg/certs"
)

const validity = 30 * 24 * time.Hour

func main() {
	dir := flag.String("dir", "", "folder to write into")
	nodeIP := flag.String("node-ip", "10.250.0.2", "the node's IP, where the API server listens")
	node := flag.String("node", "", "the node's name")
	flag.Parse()
	if *dir == "" || *node == "" || net.ParseIP(*nodeIP) == nil {
		fmt.Fprintln(os.Stderr, "usage: nodepki -dir DIR -node-ip IP -node NAME")
		os.Exit(2)
	}
	if _, err := os.Stat(filepath.Join(*dir, "ca.crt")); err != nil {
		if err := write(*dir, net.ParseIP(*nodeIP), *node); err != nil {
			fmt.Fprintln(os.Stderr, "nodepki:", err)
			os.Exit(1)
		}
	}
	if _, err := os.Stat(filepath.Join(*dir, "admission.yaml")); err != nil {
		if err := writeWebhookClient(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "nodepki:", err)
			os.Exit(1)
		}
	}
}

// WebhookClientName is the common name of the client certificate the API server presents to
// webhooks, the one deploy/components/apiserver-client-auth has the webhook require.
const webhookClientName = "policyattachment-apiserver"

// writeWebhookClient writes what README's Security section has an operator give the API
// server so that webhooks can authenticate it: a CA of its own (webhook-client-ca.crt, which
// the webhook trusts), a client certificate it signed (webhook-client.crt/key), a kubeconfig
// naming them for every webhook ("*"), and the AdmissionConfiguration that points both
// webhook admission plugins at that kubeconfig (admission.yaml, the API server's
// --admission-control-config-file).
func writeWebhookClient(dir string) error {
	ca, err := certs.NewCA("policyattachment-webhook-client-ca", validity)
	if err != nil {
		return err
	}
	cert, key, err := ca.IssueClient(webhookClientName, nil, validity)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"webhook-client-ca.crt": ca.CertPEM,
		"webhook-client.crt":    cert,
		"webhook-client.key":    key,
		"webhook-client.kubeconfig": fmt.Appendf(nil, `apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, filepath.Join(dir, "webhook-client.crt"), filepath.Join(dir, "webhook-client.key")),
	}
	plugin := func(name string) string {
		return fmt.Sprintf(`- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, name, filepath.Join(dir, "webhook-client.kubeconfig"))
	}
	files["admission.yaml"] = []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
		plugin("ValidatingAdmissionWebhook") + plugin("MutatingAdmissionWebhook"))
	for _, name := range []string{"webhook-client-ca.crt", "webhook-client.crt", "webhook-client.key", "webhook-client.kubeconfig", "admission.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o600); err != nil {
			return err
		}
	}
	return nil
}

func write(dir string, nodeIP net.IP, node string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := certs.NewCA("policyattachment-node-ca", validity)
	if err != nil {
		return err
	}
	put := func(name string, data []byte) error { return os.WriteFile(filepath.Join(dir, name), data, 0o600) }
	pair := func(name string, cert, key []byte, err error) error {
		if err != nil {
			return err
		}
		if err := put(name+".crt", cert); err != nil {
			return err
		}
		return put(name+".key", key)
	}
	if err := pair("ca", ca.CertPEM, ca.KeyPEM, nil); err != nil {
		return err
	}
	apiserverNames := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}
	serviceIP := net.ParseIP("10.96.0.1") // the first IP of --service-cluster-ip-range
	cert, key, err := ca.Issue(apiserverNames, []net.IP{nodeIP, serviceIP, net.ParseIP("127.0.0.1")}, validity)
	if err := pair("apiserver", cert, key, err); err != nil {
		return err
	}
	cert, key, err = ca.Issue([]string{node}, []net.IP{nodeIP}, validity)
	if err := pair("kubelet-serving", cert, key, err); err != nil {
		return err
	}
	cert, key, err = ca.IssueClient("kube-apiserver-kubelet-client", []string{"system:masters"}, validity)
	if err := pair("apiserver-kubelet-client", cert, key, err); err != nil {
		return err
	}
	server := fmt.Sprintf("https://%s:6443", nodeIP)
	for name, who := range map[string][2]string{
		"admin":              {"admin", "system:masters"},
		"controller-manager": {"system:kube-controller-manager", ""},
		"scheduler":          {"system:kube-scheduler", ""},
		"kubelet":            {"system:node:" + node, "system:nodes"},
		"kube-proxy":         {"system:kube-proxy", ""},
	} {
		var groups []string
		if who[1] != "" {
			groups = []string{who[1]}
		}
		cert, key, err := ca.IssueClient(who[0], groups, validity)
		if err != nil {
			return err
		}
		if err := put(name+".kubeconfig", kubeconfig(server, ca.CertPEM, cert, key)); err != nil {
			return err
		}
	}
	return serviceAccountKey(dir)
}

func kubeconfig(server string, caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: node
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: user
  user: {client-certificate-data: %s, client-key-data: %s}
contexts:
- name: node
  context: {cluster: node, user: user}
current-context: node
`, server, b64(caPEM), b64(certPEM), b64(keyPEM))
}

// serviceAccountKey writes sa.key and sa.pub, the key that signs ServiceAccount tokens.
func serviceAccountKey(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}
