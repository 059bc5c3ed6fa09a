// Command e2e is `make e2e` on a machine without Docker: a real local kube-apiserver + etcd,
// the real `webhook serve` binary as a process, and the webhook configurations rendered
// from deploy/base with a URL (this process) instead of the in-cluster Service. It then
// runs the e2e suite (test/e2e) against that cluster's kubeconfig and exits with its code.
//
// The suite can stop, kill and start the webhook (with extra flags) through a loopback
// control endpoint (E2E_WEBHOOK_CONTROL), for the failure drills.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

func main() {
	bin := flag.String("webhook", "bin/webhook", "the webhook binary")
	work := flag.String("work", filepath.Join(".local", "e2e"), "folder for the kubeconfig, certificates and the webhook's log")
	flag.Parse()
	code, err := run(*bin, *work, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(bin, work string, testArgs []string) (int, error) {
	fmt.Println("e2e: starting kube-apiserver and etcd...")
	cp, err := localcluster.StartControlPlane("test/crds")
	if err != nil {
		return 0, err
	}
	defer func() { _ = cp.Stop() }()
	kubeconfig, err := filepath.Abs(filepath.Join(work, "kubeconfig")) // go test runs in the package folder
	if err != nil {
		return 0, err
	}
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return 0, err
	}

	ca, err := certs.NewCA("policyattachment-e2e-ca", 24*time.Hour)
	if err != nil {
		return 0, err
	}
	certDir := filepath.Join(work, "certs")
	leaf, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, 24*time.Hour)
	if err != nil {
		return 0, err
	}
	if err := certs.WriteKeyPair(certDir, leaf, key); err != nil {
		return 0, err
	}
	port, err := localcluster.FreePort()
	if err != nil {
		return 0, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	sup := &supervisor{
		// No endpoints to drain: the API server dials this process directly.
		args: []string{bin, "serve", "--kubeconfig", kubeconfig, "--cert-dir", certDir, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--shutdown-delay=0",
			"--metrics-bind-address=0", "--health-probe-bind-address=0"}, // probes read on the HTTPS port; no other port taken
		log: filepath.Join(work, "webhook.log"),
		url: fmt.Sprintf("https://127.0.0.1:%d/readyz", port),
		tls: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}
	if err := sup.start(); err != nil {
		return 0, err
	}
	defer sup.stop()

	fmt.Println("e2e: registering the webhook configurations rendered from deploy/base...")
	if err := register(cp.Config, fmt.Sprintf("https://127.0.0.1:%d", port), ca.CertPEM); err != nil {
		return 0, err
	}
	control, err := serveControl(sup)
	if err != nil {
		return 0, err
	}

	args := append([]string{"test", "-tags", "e2e", "-count=1", "./test/e2e/"}, testArgs...)
	fmt.Printf("e2e: go %v (webhook log: %s)\n", args, sup.log)
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "E2E_WEBHOOK_CONTROL="+control)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		return 0, err
	}
	return 0, nil
}

// register applies the Namespace and the two webhook configurations of deploy/base, with
// each clientConfig pointing at url and trusting caPEM.
func register(cfg *rest.Config, url string, caPEM []byte) error {
	out, err := exec.Command("kubectl", "kustomize", "deploy/base").Output()
	if err != nil {
		return fmt.Errorf("kubectl kustomize deploy/base: %w", err)
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil || u.Object == nil {
			continue
		}
		switch u.GetKind() {
		case "Namespace":
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
			for _, h := range hooks {
				hook := h.(map[string]any)
				svc, _, _ := unstructured.NestedMap(hook, "clientConfig", "service")
				hook["clientConfig"] = map[string]any{
					"url":      url + svc["path"].(string),
					"caBundle": base64.StdEncoding.EncodeToString(caPEM),
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
				return err
			}
		default:
			continue // the Deployment, RBAC and Service stay out: the webhook runs here
		}
		if err := cl.Create(context.Background(), u); err != nil {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
}

// supervisor runs the webhook binary and restarts it on request.
type supervisor struct {
	mu   sync.Mutex
	args []string
	log  string
	url  string
	tls  *tls.Config
	cmd  *exec.Cmd
}

// start runs the webhook with the base arguments plus extra, and waits until it is ready.
func (s *supervisor) start(extra ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	logFile, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.args[0], append(s.args[1:len(s.args):len(s.args)], extra...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.args[0], err)
	}
	s.cmd = cmd
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: s.tls}, Timeout: time.Second}
	if err := localcluster.WaitReady(hc, s.url, 30*time.Second); err != nil {
		return fmt.Errorf("%w; see %s", err, s.log)
	}
	return nil
}

// kill ends the webhook with SIGKILL: no graceful shutdown, as when a node dies.
func (s *supervisor) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

func (s *supervisor) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// serveControl exposes POST /stop, /kill and /start (?arg=FLAG, repeatable, adds flags to
// this run) on loopback and returns its URL.
func serveControl(s *supervisor) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) { s.stop() })
	mux.HandleFunc("POST /kill", func(w http.ResponseWriter, _ *http.Request) { s.kill() })
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		if err := s.start(r.URL.Query()["arg"]...); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	go func() { _ = http.Serve(l, mux) }()
	return "http://" + l.Addr().String(), nil
}
