package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/policyattachment/webhook/internal/synthetic"
)

// The floor: what the same load costs against a TLS server that does no admission work at
// all, in its own process on the same machine. It answers each review of the mix with the
// verdict the webhook gives it, found by a hash of the body, without decoding anything. The
// latency it shows is the part of the webhook's figures that the machine, the generator,
// TLS and net/http account for.

// serveFloor runs the floor server until the process is killed.
func serveFloor(certDir string, port int) error {
	verdicts := map[uint64][]byte{}
	for _, r := range synthetic.Reviews() {
		verdicts[bodyHash(r.Body)] = []byte(fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-0000-0000-000000000001","allowed":%t}}`, r.Allowed))
	}
	review := func(w http.ResponseWriter, req *http.Request) {
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, req.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer, ok := verdicts[bodyHash(buf.Bytes())]
		if !ok {
			http.Error(w, "not a review of the mix", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", review)
	mux.HandleFunc("/mutate", review)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return err
	}
	// The webhook's defaults: TLS 1.3, HTTP/1.1 only.
	srv := &http.Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Handler: mux, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, NextProtos: []string{"http/1.1"},
	}}
	return srv.ListenAndServeTLS("", "")
}

func bodyHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
