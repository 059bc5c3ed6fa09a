package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/policyattachment/webhook/pkg/admission"
)

// serveNoop answers every admission review on 127.0.0.1:port "allowed", with no work, using
// the serving certificate in certDir; reviews on the mutating path are answered with
// mutatePatch (a JSONPatch) when it is not nil. It returns a function that stops it.
func serveNoop(port int, certDir string, mutatePatch []byte) (func(), error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return nil, err
	}
	var l net.Listener
	// The port may be the webhook's, just stopped: wait for it to be free.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l, err = tls.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, NextProtos: []string{"http/1.1"}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, err
		}
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			APIVersion string `json:"apiVersion"`
			Request    struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		response := map[string]any{"uid": in.Request.UID, "allowed": true}
		if mutatePatch != nil && r.URL.Path == admission.PathMutate {
			response["patchType"], response["patch"] = "JSONPatch", mutatePatch // base64, as []byte encodes
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": in.APIVersion, "kind": "AdmissionReview", "response": response})
	})}
	go func() { _ = srv.Serve(l) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
