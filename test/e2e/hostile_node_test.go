//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// The drills of a hostile caller inside the cluster against the shipped Deployment: a pod
// that reaches a webhook pod's review port (here through a port-forward, which reaches the
// pod as any pod on the network does), and a tenant writing through the API server.

// readyWebhookPods names the webhook's ready pods.
func readyWebhookPods(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	var out []string
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil && podReady(&pods.Items[i]) {
			out = append(out, pods.Items[i].Name)
		}
	}
	return out
}

// forwardTo forwards a local port to a port of a pod of the webhook's namespace, through the
// API server and the kubelet (kubectl port-forward's way: it reaches the pod wherever the
// test runs, as a pod on the cluster network would), and returns the local address.
func forwardTo(t *testing.T, cs kubernetes.Interface, pod string, port int) string {
	t.Helper()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	require.NoError(t, err)
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	require.NoError(t, err)
	go func() { _ = fw.ForwardPorts() }()
	t.Cleanup(func() { close(stop) })
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("the port-forward to %s:%d did not start", pod, port)
	}
	ports, err := fw.GetPorts()
	require.NoError(t, err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local)))
}

// forwardToWebhook forwards a local port to a ready webhook pod's review port (9443) and
// returns its address and the pod's name.
func forwardToWebhook(t *testing.T, cs kubernetes.Interface) (addr, pod string) {
	t.Helper()
	pods := readyWebhookPods(t, cs)
	require.NotEmpty(t, pods, "a ready webhook pod")
	return forwardTo(t, cs, pods[0], 9443), pods[0]
}

// clientAuthOn reports whether the Deployment authenticates its callers (--client-ca-file).
func clientAuthOn(t *testing.T, cs kubernetes.Interface) bool {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "policyattachment-webhook", metav1.GetOptions{})
	require.NoError(t, err)
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--client-ca-file=") {
			return true
		}
	}
	return false
}

// forgedDrillReview is a CREATE review of drillPolicy(name, svc), as an attacker POSTs it.
func forgedDrillReview(name, svc string) []byte {
	return []byte(fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "forged-%[1]s", "operation": "CREATE",
		"kind": {"group": "gateway.networking.k8s.io", "version": "v1", "kind": "BackendTLSPolicy"},
		"resource": {"group": "gateway.networking.k8s.io", "version": "v1", "resource": "backendtlspolicies"},
		"namespace": "e2e-drill", "name": %[1]q, "object": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %[1]q, "namespace": "e2e-drill"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": %[2]q, "sectionName": "https"}],
		         "validation": {"hostname": "x.example", "wellKnownCACertificates": "System"}}}}}`, name, svc))
}

// TestForgedReviewsStraightToAPod: with client authentication (the apiserver-client-auth
// component), a review POSTed straight to a webhook pod is refused at the handshake; without
// it, it is judged, but what it takes lasts only the confirmation window: a real write at its
// target right after it is admitted, and it leaves no Lease.
func TestForgedReviewsStraightToAPod(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	drillNamespace(t, cl)
	svc := fmt.Sprintf("forged-%d", time.Now().UnixNano()%100000)
	require.NoError(t, cl.Create(ctx, drillService(svc)))
	addr, pod := forwardToWebhook(t, cs)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}
	post := func(name string) (*http.Response, error) {
		return hc.Post("https://"+addr+"/validate", "application/json", bytes.NewReader(forgedDrillReview(name, svc)))
	}

	if clientAuthOn(t, cs) {
		t.Logf("%s authenticates its callers: a forged review must fail the handshake", pod)
		resp, err := post("ghost")
		if err == nil {
			resp.Body.Close()
		}
		require.Error(t, err, "no certificate of the API server's: refused before anything is read")
		require.NoError(t, cl.Create(ctx, drillPolicy("real-"+svc, svc)), "the API server's own reviews are answered")
		return
	}

	t.Logf("%s answers any caller: a forged review may hold its target for the confirmation window only", pod)
	// Until the Service reaches that pod's store the review claims nothing; forge until it does.
	key := "gateway.networking.k8s.io/BackendTLSPolicy /Service/e2e-drill/" + svc
	sum := sha256.Sum256([]byte(key))
	lease := "policyattachment-claim-" + hex.EncodeToString(sum[:10])
	leaseExists := func() bool {
		l := &unstructured.Unstructured{}
		l.SetAPIVersion("coordination.k8s.io/v1")
		l.SetKind("Lease")
		err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: lease}, l)
		if apierrors.IsNotFound(err) {
			return false
		}
		require.NoError(t, err)
		return true
	}
	eventually(t, "a forged review takes the claim at its target", func() error {
		resp, err := post("ghost")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if !leaseExists() {
			return errors.New("no claim yet")
		}
		return nil
	})
	start := time.Now()
	require.NoError(t, cl.Create(ctx, drillPolicy("real-"+svc, svc)), "the real write is admitted, not refused")
	t.Logf("the real write at the forged review's target took %s", time.Since(start))

	other := svc + "-b"
	require.NoError(t, cl.Create(ctx, drillService(other)))
	time.Sleep(2 * time.Second) // the Service reaches both stores
	resp, err := hc.Post("https://"+addr+"/validate", "application/json", bytes.NewReader(forgedDrillReview("ghost-b", other)))
	require.NoError(t, err)
	resp.Body.Close()
	sum = sha256.Sum256([]byte("gateway.networking.k8s.io/BackendTLSPolicy /Service/e2e-drill/" + other))
	lease = "policyattachment-claim-" + hex.EncodeToString(sum[:10])
	eventually(t, "the forged review's Lease is gone", func() error {
		if leaseExists() {
			return errors.New("still there")
		}
		return nil
	})
}

// TestForgedFloodLeavesNoLease: without client authentication, 50 forged reviews at once
// straight to one pod, each for a policy at a Service that does not exist, are answered;
// 50 more whose caller hangs up within milliseconds may be cut mid-claim. Through the shipped
// Deployment and RBAC, clusterstate.GivenBackWithin the confirm window (2.25 s) after the
// flood, no Lease it took is left.
func TestForgedFloodLeavesNoLease(t *testing.T) {
	cl, cs := deployed(t)
	if clientAuthOn(t, cs) {
		t.Skip("the pod authenticates its callers: a forged review takes nothing")
	}
	drillNamespace(t, cl)
	addr, pod := forwardToWebhook(t, cs)
	before := claimLeasesNow(t, cs)
	run := fmt.Sprintf("%d", time.Now().UnixNano()%100000)
	flood := func(wave string, timeout time.Duration) (answered int) {
		var n atomic.Int32
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				hc := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}
				resp, err := hc.Post("https://"+addr+"/validate", "application/json",
					bytes.NewReader(forgedDrillReview(fmt.Sprintf("%s-%s-%d", wave, run, i), fmt.Sprintf("missing-%s-%s-%d", wave, run, i))))
				if err != nil {
					return
				}
				defer resp.Body.Close()
				var review struct {
					Response struct{ Allowed bool } `json:"response"`
				}
				if json.NewDecoder(resp.Body).Decode(&review) == nil && review.Response.Allowed {
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return int(n.Load())
	}
	answered := flood("flood", 30*time.Second)
	rightAfter := claimLeasesNow(t, cs)
	cut := 50 - flood("cut", 20*time.Millisecond)
	end := time.Now()
	assert.Equal(t, 50, answered, "every forged review answered and admitted by %s", pod)

	bound := clusterstate.GivenBackWithin(clusterstate.DefaultConfirmWindow)
	time.Sleep(time.Until(end.Add(bound)))
	after := claimLeasesNow(t, cs)
	t.Logf("claim Leases: %d before; %d right after 50 forged reviews answered by %s (then 50 more, %d cut by their caller); %d once %s passed",
		len(before), len(rightAfter), pod, cut, len(after), bound)
	assert.Empty(t, testkit.LeasesAdded(before, after), "no Lease the flood took outlives %s", bound)
}

// TestStalledAndTricklingBodiesAreClosed: 500 connections that send a review's headers and
// stop, and 50 that send its body a byte a second, are all closed by the pod within 35 s,
// while writes through the API server are answered.
func TestStalledAndTricklingBodiesAreClosed(t *testing.T) {
	cl, cs := deployed(t)
	if clientAuthOn(t, cs) {
		t.Skip("the pod authenticates its callers: a body is read only after the API server's certificate")
	}
	ctx := context.Background()
	drillNamespace(t, cl)
	addr, _ := forwardToWebhook(t, cs)
	body := forgedDrillReview("stalled", "nowhere")
	var closed, open atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 550 {
		wg.Go(func() {
			conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
			if err != nil {
				return
			}
			defer conn.Close()
			open.Add(1)
			if _, err := fmt.Fprintf(conn, "POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)); err != nil {
				return
			}
			trickle := i >= 500
			_ = conn.SetReadDeadline(time.Now().Add(40 * time.Second))
			done := make(chan struct{})
			if trickle {
				go func() {
					for _, b := range body {
						select {
						case <-done:
							return
						case <-time.After(time.Second):
						}
						if _, err := conn.Write([]byte{b}); err != nil {
							return
						}
					}
				}()
			}
			_, err = io.Copy(io.Discard, conn) // the answer, then EOF when the pod closes
			close(done)
			var ne net.Error
			if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
				closed.Add(1)
			}
		})
	}
	// Meanwhile, writes through the API server are answered.
	require.NoError(t, cl.Create(ctx, drillService("beside-stalled")))
	require.NoError(t, cl.Create(ctx, drillPolicy("beside-stalled", "beside-stalled")))
	wg.Wait()
	t.Logf("%d of %d connections closed by the pod, all within %s", closed.Load(), open.Load(), time.Since(start))
	assert.Equal(t, open.Load(), closed.Load(), "every stalled or trickling body closed")
	assert.Less(t, time.Since(start), 35*time.Second)
}

// TestHostileSizesThroughTheAPIServer: 32 creates at once, each a policy of 36,000
// targetRefs (2.3 MiB) as a tenant can send through the API server (the mutating webhook
// sees them before the CRD's maxItems refuses them), while a real policy is written: no
// webhook pod restarts (an OOM kill would), every hostile create is refused, the real one
// answered. On the real node the pods' peak RSS is read from /proc and must stay under the
// Deployment's 512 Mi limit.
func TestHostileSizesThroughTheAPIServer(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	drillNamespace(t, cl)
	restarts := func() int32 {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
		require.NoError(t, err)
		var n int32
		for _, p := range pods.Items {
			for _, s := range p.Status.ContainerStatuses {
				n += s.RestartCount
			}
		}
		return n
	}
	before := restarts()
	refs := make([]any, 36000)
	for i := range refs {
		refs[i] = map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("s%05d", i), "sectionName": "https"}
	}
	var wg sync.WaitGroup
	var admitted atomic.Int64
	start := time.Now()
	for i := range 32 {
		wg.Go(func() {
			p := drillPolicy(fmt.Sprintf("huge-%d", i), "nowhere")
			_ = unstructured.SetNestedSlice(p.Object, refs, "spec", "targetRefs")
			if err := cl.Create(ctx, p); err == nil {
				admitted.Add(1)
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, cl.Create(ctx, drillService("beside-huge")))
	realStart := time.Now()
	require.NoError(t, cl.Create(ctx, drillPolicy("beside-huge", "beside-huge")), "a real policy is answered meanwhile")
	t.Logf("the real policy was answered in %s", time.Since(realStart))
	wg.Wait()
	size, err := json.Marshal(refs)
	require.NoError(t, err)
	t.Logf("32 hostile creates of %.1f MiB of targetRefs each answered in %s", float64(len(size))/(1<<20), time.Since(start))
	assert.Zero(t, admitted.Load(), "none admitted")
	assert.Equal(t, before, restarts(), "no webhook pod restarted")
	if peaks := webhookPeakRSS(t); len(peaks) > 0 {
		for pid, kib := range peaks {
			t.Logf("webhook process %d: peak RSS %d MiB", pid, kib>>10)
			assert.Less(t, kib, int64(512<<10), "under the Deployment's limit")
		}
	}
}

// webhookPeakRSS reads VmHWM (KiB) of each `webhook serve` process this host sees (the real
// node shares its PID namespace with the host); none elsewhere.
func webhookPeakRSS(t *testing.T) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), "serve\x00--cert-dir=/certs") {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				kib, _ := strconv.ParseInt(f[1], 10, 64)
				out[pid] = kib
			}
		}
	}
	return out
}

// drillNamespace makes sure the drills' namespace exists (other drills make it too).
func drillNamespace(t *testing.T, cl client.Client) {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("e2e-drill")
	if err := cl.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// claimLeasesNow are the claim Leases in the webhook's namespace, by name, each with its
// holder ("" released).
func claimLeasesNow(t *testing.T, cs kubernetes.Interface) map[string]string {
	return testkit.ClaimLeases(t, cs.CoordinationV1().Leases(ns))
}
