package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// The floor: what the same load costs against a TLS server that does no admission work at
// all, in its own process on the same machine. It answers each review of the mix with the
// verdict the webhook gives it, found by a hash of the body, without decoding anything. The
// latency it shows is the part of the webhook's figures that the machine, the generator,
// TLS and net/http account for.

// floorShape makes the floor's process look like the webhook's to the garbage collector, to
// tell what costs latency: a live heap of the snapshot's size, with pointers or without, and
// garbage per review. BENCHMARKS.md ("Why p99 still misses") uses it.
type floorShape struct {
	heap    string        // "", "objects" or "bytes"
	garbage int           // 112-byte objects allocated per review
	work    time.Duration // CPU spent per review
}

// serveFloor runs the floor server until the process is killed.
func serveFloor(certDir string, port int, shape floorShape, size synthetic.Size) error {
	heap, err := floorHeap(shape.heap)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(heap)
	spin := calibrateSpin(shape.work)
	verdicts := map[uint64][]byte{}
	for _, r := range synthetic.Reviews(size) {
		verdicts[bodyHash(r.Body)] = []byte(fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-0000-0000-000000000001","allowed":%t}}`, r.Allowed))
	}
	review := func(w http.ResponseWriter, req *http.Request) {
		var garbage *heapNode
		for range shape.garbage {
			garbage = &heapNode{next: garbage}
		}
		runtime.KeepAlive(garbage)
		spinSink.Add(spinFor(spin))
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

// spinSink keeps the spinning loop's result alive, so the compiler cannot drop the loop.
var spinSink atomic.Uint64

// spinFor runs n rounds of a loop that only uses the CPU (no memory, no system calls).
func spinFor(n int) uint64 {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// calibrateSpin returns how many rounds of spinFor take d of CPU, from the fastest of a few
// timed runs at start-up (before any load: the fastest run is the one nothing interrupted).
func calibrateSpin(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	const rounds = 1 << 20
	fastest := time.Duration(1 << 62)
	for range 20 {
		start := time.Now()
		spinSink.Add(spinFor(rounds))
		fastest = min(fastest, time.Since(start))
	}
	return int(float64(rounds) * float64(d) / float64(fastest))
}

// heapNode is 112 bytes with pointers: the collector marks and scans each one.
type heapNode struct {
	next *heapNode
	name string
	pad  [88]byte
}

// floorHeap builds the live heap -floor-heap asks for: the size of the synthetic snapshot as
// it was (BenchmarkGCWithSnapshot: 28.5 MiB in 260,500 objects) as objects the collector
// visits one by one, or as one allocation it never scans.
func floorHeap(kind string) (any, error) {
	n, err := floorHeapObjects(kind)
	switch {
	case err != nil:
		return nil, err
	case kind == "":
		return nil, nil
	case kind == "bytes":
		b := make([]byte, 28<<20)
		for i := range b {
			b[i] = 1 // touched, so it is resident as the snapshot is
		}
		return b, nil
	}
	nodes := make([]*heapNode, n)
	for i := range nodes {
		nodes[i] = &heapNode{name: "x"}
		if i > 0 {
			nodes[i].next = nodes[i-1]
		}
	}
	return nodes, nil
}

// floorHeapObjects reads -floor-heap: "", "bytes", "objects" (260,000) or "objects=N", and
// returns how many objects it asks for.
func floorHeapObjects(kind string) (int, error) {
	switch {
	case kind == "" || kind == "bytes":
		return 0, nil
	case kind == "objects":
		return 260_000, nil
	case strings.HasPrefix(kind, "objects="):
		if n, err := strconv.Atoi(strings.TrimPrefix(kind, "objects=")); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("-floor-heap %q: want objects, objects=N (N > 0) or bytes", kind)
}

func bodyHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
