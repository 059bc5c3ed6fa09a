// Command hostile measures a webhook binary against hostile review bodies sent straight to
// its review port, as a pod that reaches a webhook pod could: N bodies of a ColorPolicy with
// -refs targetRefs at once to -path, and one small review meanwhile; it prints how each was
// answered, how long the small one took, and the process's peak RSS (VmHWM). The webhook runs
// `serve --snapshot-from` with GOMEMLIMIT=460MiB, what the shipped 512 Mi limit gives it.
//
//	go run ./hack/bench/hostile -webhook bin/webhook -certs deploy/overlays/plain-certs/out -snapshot examples -args --metrics-secure=false
package main

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

func review(refs int) []byte {
	var b strings.Builder
	for i := 0; i < refs; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r%05d"}`, i)
	}
	return []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"1","operation":"CREATE",
"kind":{"group":"policies.controller.io","version":"v1","kind":"ColorPolicy"},
"resource":{"group":"policies.controller.io","version":"v1","resource":"colorpolicies"},
"namespace":"app","name":"p","object":{"apiVersion":"policies.controller.io/v1","kind":"ColorPolicy","metadata":{"name":"p","namespace":"app"},
"spec":{"targetRefs":[` + b.String() + `],"color":"red"}}}}`)
}

func vmHWM(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "?"
}

func main() {
	bin := flag.String("webhook", "", "binary")
	certs := flag.String("certs", "", "cert dir")
	snapshot := flag.String("snapshot", "", "manifests")
	n := flag.Int("n", 32, "concurrent")
	refs := flag.Int("refs", 60000, "targetRefs per body")
	path := flag.String("path", "/mutate", "path")
	extra := flag.String("args", "", "extra args")
	flag.Parse()
	args := []string{"serve", "--snapshot-from", *snapshot, "--cert-dir", *certs, "--port", "19443", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	if *extra != "" {
		args = append(args, strings.Fields(*extra)...)
	}
	cmd := exec.Command(*bin, args...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=460MiB")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer cmd.Process.Kill()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxConnsPerHost: 0}}
	for i := 0; ; i++ {
		if r, err := hc.Get("https://127.0.0.1:19443/readyz"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if i > 300 {
			panic("not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("ready; RSS peak %s\n", vmHWM(cmd.Process.Pid))
	body := review(*refs)
	small := review(1)
	var wg sync.WaitGroup
	codes := map[string]int{}
	var mu sync.Mutex
	start := time.Now()
	for i := 0; i < *n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := hc.Post("https://127.0.0.1:19443"+*path, "application/json", bytes.NewReader(body))
			k := "error"
			if err == nil {
				out, _ := io.ReadAll(r.Body)
				r.Body.Close()
				k = "ok"
				for _, c := range []string{`"code":429`, `"code":422`, `"code":200`, `"allowed":true`} {
					if bytes.Contains(out, []byte(c)) {
						k = c
						break
					}
				}
			}
			mu.Lock()
			codes[k]++
			mu.Unlock()
		}()
	}
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	r, err := hc.Post("https://127.0.0.1:19443/validate", "application/json", bytes.NewReader(small))
	smallTook := time.Since(t0)
	if err == nil {
		r.Body.Close()
	}
	wg.Wait()
	fmt.Printf("%d bodies of %.1f MiB to %s: %v in %s; a small review meanwhile: %s (err %v); RSS peak %s\n", *n, float64(len(body))/(1<<20), *path, codes, time.Since(start).Round(time.Millisecond), smallTook.Round(time.Millisecond), err, vmHWM(cmd.Process.Pid))
}
