// Command compare is `make compare`: on one local control plane it measures the latency of
// creating a policy through the API server (a) with no admission webhook, (b) with a
// ValidatingAdmissionPolicy holding the single-object checks CEL can express (reference
// format, one merge strategy), (d) with a webhook pair that does nothing (allowed, no
// patch) registered exactly like this one, the floor of two webhook calls, (c) with this
// webhook, validating and mutating, and (e) the no-op pair again, its mutating half answering
// with the very annotation patch this webhook gave in (c): what the API server spends on
// applying the patch, apart from computing it. It prints the median and p99 of each and the
// ratios c/a and c/b. Then (f) the shipped configuration: two replicas, each with a store
// of its own, claims on, behind a proxy that sends each review to the next replica (as the
// Service spreads them over the Deployment's pods), and (f0) the no-op pair behind the same
// proxy, its floor. -busy writes one unrelated ConfigMap after each create (untimed), as a
// real cluster's background writes do; -pairs N measures conflicting pairs through two
// replicas instead (README: "Across replicas"). For (c) and (f) it prints the webhook's own
// requests to the API server per create, and the API server's account of its consistent
// reads of the kind (apiserver_watch_cache_read_wait_seconds).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

type options struct {
	n              int
	noLive, busy   bool
	shipped        bool
	pairs          int
	spacing        time.Duration
	profileDir     string
	readWaitTarget string // the resource whose consistent reads are counted
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 300, "policies created per phase")
	flag.BoolVar(&o.noLive, "no-live-reads", false, "run phase (c) with the webhook's live reads off (one replica); skips (f)")
	flag.BoolVar(&o.busy, "busy", false, "after each create, write one unrelated ConfigMap (untimed), as a busy cluster's background writes")
	flag.BoolVar(&o.shipped, "shipped", true, "also measure (f) the shipped configuration: two replicas, claims on, behind a round-robin proxy; and (f0) its floor")
	flag.IntVar(&o.pairs, "pairs", 0, "instead of the phases, create N conflicting pairs of BackendTLSPolicies through two replicas: claims off with and without live reads, claims on")
	flag.DurationVar(&o.spacing, "spacing", 0, "with -pairs: the second create of each pair this long after the first")
	flag.StringVar(&o.profileDir, "profile", "", "write a CPU and a block profile of phase (c) (the in-process webhook and this client) into this folder")
	flag.Parse()
	o.readWaitTarget = "colorpolicies"
	if o.pairs > 0 {
		o.readWaitTarget = "backendtlspolicies"
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	n, noLive := o.n, o.noLive
	fmt.Println("compare: starting kube-apiserver and etcd...")
	cp, err := localcluster.StartControlPlane("test/crds")
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	cl, err := client.New(cp.Config, client.Options{Scheme: k8sruntime.NewScheme()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	after, err := busyWriter(ctx, cl, o.busy)
	if err != nil {
		return err
	}

	if o.pairs > 0 {
		attached, port, certDir, requests, cleanup, err := attach(cp.Config, o.readWaitTarget)
		if err != nil {
			return err
		}
		defer cleanup()
		return runPairs(ctx, o, cp.Config, attached, port, certDir, requests)
	}

	a, err := phase(ctx, cl, "compare-a", n, after)
	if err != nil {
		return err
	}
	report("(a) no webhook", a)

	for _, doc := range []string{vap, vapBinding} {
		if err := cl.Create(ctx, object(doc)); err != nil {
			return fmt.Errorf("creating the ValidatingAdmissionPolicy: %w", err)
		}
	}
	if err := waitDenied(ctx, cl, "compare-b"); err != nil {
		return err
	}
	b, err := phase(ctx, cl, "compare-b", n, after)
	if err != nil {
		return err
	}
	report("(b) ValidatingAdmissionPolicy", b)
	if err := cl.Delete(ctx, object(vapBinding)); err != nil {
		return err
	}
	attached, port, certDir, requests, cleanup, err := attach(cp.Config, o.readWaitTarget)
	if err != nil {
		return err
	}
	defer cleanup()
	attached.NoLiveReads = noLive

	// (d): the same two configurations, the same URL and certificate, an answer that costs
	// nothing. What it adds over (a) is the API server's cost of calling two webhooks.
	stopNoop, err := serveNoop(port, certDir, nil)
	if err != nil {
		return err
	}
	d, err := phase(ctx, cl, "compare-d", n, after)
	stopNoop()
	if err != nil {
		return err
	}
	report("(d) a no-op webhook pair (the floor)", d)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := attached.StartWebhook(wctx, kinds.BuiltinKindTable(), logr.Discard()); err != nil {
		return err
	}
	if err := waitDenied(ctx, cl, "compare-c"); err != nil {
		return err
	}
	before, err := scrapeHandlerTime(attached)
	if err != nil {
		return err
	}
	waitBefore, err := scrapeReadWait(cp.Config, o.readWaitTarget)
	if err != nil {
		return err
	}
	reqBefore := requests.snapshot()
	stopProfiles, err := startProfiles(o.profileDir)
	if err != nil {
		return err
	}
	c, err := phase(ctx, cl, "compare-c", n, after)
	if err != nil {
		return err
	}
	if err := stopProfiles(); err != nil {
		return err
	}
	handlersAfter, err := scrapeHandlerTime(attached)
	if err != nil {
		return err
	}
	waitAfter, err := scrapeReadWait(cp.Config, o.readWaitTarget)
	if err != nil {
		return err
	}
	name := "(c) this webhook (validate + mutate)"
	if noLive {
		name = "(c) this webhook, --live-reads=false"
	}
	report(name, c)
	fmt.Printf("compare: (c) the webhook's requests to the API server per create: %s; the API server: %s\n",
		describe(requests.snapshot(), reqBefore, n), waitAfter.since(waitBefore, n))
	fmt.Printf("compare: (c) inside the webhook's handlers, mean: %s\n", handlersAfter.since(before))

	patch, err := admittedPatch(ctx, cl, "compare-c")
	if err != nil {
		return err
	}
	cancel() // stop the webhook: (e) answers on its port
	stopNoop, err = serveNoop(port, certDir, patch)
	if err != nil {
		return err
	}
	e, err := phase(ctx, cl, "compare-e", n, after)
	stopNoop()
	if err != nil {
		return err
	}
	report("(e) the no-op pair, answering c's patch", e)
	if o.shipped && !noLive {
		if err := shippedPhases(ctx, cl, o, cp.Config, attached, port, certDir, patch, requests, after, e); err != nil {
			return err
		}
	}
	fmt.Printf("compare: median c/a %.2f (adds %s), c/b %.2f; p99 c/a %.2f, c/b %.2f\n",
		ratio(c, a, 50), pct(c, 50)-pct(a, 50), ratio(c, b, 50), ratio(c, a, 99), ratio(c, b, 99))
	fmt.Printf("compare: median d adds %s to a: the API server's two webhook calls; e adds %s to d: applying the annotation patch; c adds %s to e: this webhook's own work\n",
		pct(d, 50)-pct(a, 50), pct(e, 50)-pct(d, 50), pct(c, 50)-pct(e, 50))
	return nil
}

// attach registers the webhook configurations for a webhook on a free port of this
// machine, with a serving certificate in a new folder (cleanup removes it). The webhook's
// own requests to the API server go through requests, which counts and times them on their
// way out (resource: the policy kind's).
func attach(cfg *rest.Config, resource string) (attached *localcluster.Cluster, port int, certDir string, requests *requestLog, cleanup func(), err error) {
	if port, err = localcluster.FreePort(); err != nil {
		return nil, 0, "", nil, nil, err
	}
	if certDir, err = os.MkdirTemp("", "compare-certs-"); err != nil {
		return nil, 0, "", nil, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(certDir) }
	requests = newRequestLog(resource)
	webhookConfig := rest.CopyConfig(cfg)
	webhookConfig.WrapTransport = requests.wrap
	if attached, err = localcluster.Attach(webhookConfig, "127.0.0.1", port, certDir); err != nil {
		cleanup()
		return nil, 0, "", nil, nil, err
	}
	return attached, port, certDir, requests, cleanup, nil
}

// shippedPhases measures (f0), the no-op pair behind the round-robin proxy answering patch,
// and (f), two replicas with claims on behind it; e is (e), the no-op pair answering patch
// without the proxy.
func shippedPhases(ctx context.Context, cl client.Client, o options, apiserver *rest.Config, attached *localcluster.Cluster,
	port int, certDir string, patch []byte, requests *requestLog, after func(int) error, e []time.Duration) error {
	stop, err := serveNoopPair(port, certDir, attached.TLS, patch)
	if err != nil {
		return err
	}
	f0, err := phase(ctx, cl, "compare-f0", o.n, after)
	stop()
	if err != nil {
		return err
	}
	report("(f0) the no-op pair behind the proxy", f0)

	attached.ClaimNamespace, attached.NoLiveReads = claimNamespace, false
	defer func() { attached.ClaimNamespace = "" }()
	rs, err := startReplicas(ctx, attached, port, certDir)
	if err != nil {
		return err
	}
	defer rs.stop()
	if err := waitDenied(ctx, cl, "compare-f"); err != nil {
		return err
	}
	waitBefore, err := scrapeReadWait(apiserver, o.readWaitTarget)
	if err != nil {
		return err
	}
	reqBefore := requests.snapshot()
	f, err := phase(ctx, cl, "compare-f", o.n, after)
	if err != nil {
		return err
	}
	waitAfter, err := scrapeReadWait(apiserver, o.readWaitTarget)
	if err != nil {
		return err
	}
	report("(f) shipped: 2 replicas, claims on", f)
	fmt.Printf("compare: (f) the replicas' requests to the API server per create: %s; the API server: %s\n",
		describe(requests.snapshot(), reqBefore, o.n), waitAfter.since(waitBefore, o.n))
	fmt.Printf("compare: median f adds %s to f0: two replicas' own work, claims included; f0 adds %s to e: the proxy's hop\n",
		pct(f, 50)-pct(f0, 50), pct(f0, 50)-pct(e, 50))
	return nil
}

// runPairs measures conflicting pairs through two replicas in three configurations, each
// with an unrelated write (the pair's Service) before every pair and with every Service
// created first.
func runPairs(ctx context.Context, o options, apiserver *rest.Config, attached *localcluster.Cluster, port int, certDir string, requests *requestLog) error {
	cl, err := client.New(apiserver, client.Options{Scheme: k8sruntime.NewScheme()})
	if err != nil {
		return err
	}
	other, err := client.New(apiserver, client.Options{Scheme: k8sruntime.NewScheme()})
	if err != nil {
		return err
	}
	configs := []struct {
		label, claims string
		noLive        bool
	}{
		{"claims off, live reads", "", false},
		{"claims off, --live-reads=false", "", true},
		{"claims on (shipped)", claimNamespace, false},
	}
	for ci, conf := range configs {
		attached.ClaimNamespace, attached.NoLiveReads = conf.claims, conf.noLive
		rs, err := startReplicas(ctx, attached, port, certDir)
		if err != nil {
			return err
		}
		if err := waitAnswered(ctx, cl, fmt.Sprintf("pairs-probe-%d", ci)); err != nil {
			rs.stop()
			return err
		}
		for _, precreate := range []bool{false, true} {
			variant := "a Service written before each pair"
			ns := fmt.Sprintf("pairs-%d-write", ci)
			if precreate {
				variant, ns = "Services written first", fmt.Sprintf("pairs-%d-quiet", ci)
			}
			waitBefore, err := scrapeReadWait(apiserver, o.readWaitTarget)
			if err != nil {
				rs.stop()
				return err
			}
			reqBefore := requests.snapshot()
			out, err := pairs(ctx, cl, other, ns, o.pairs, precreate, o.spacing)
			if err != nil {
				rs.stop()
				return err
			}
			waitAfter, err := scrapeReadWait(apiserver, o.readWaitTarget)
			if err != nil {
				rs.stop()
				return err
			}
			creates := len(out.latencies)
			fmt.Printf("compare: pairs, %-31s %-34s median %-10s p99 %-10s both admitted %d, one %d, none %d (%d pairs, %s apart)\n",
				conf.label+",", variant+":", pct(out.latencies, 50), pct(out.latencies, 99), out.both, out.one, out.none, o.pairs, o.spacing)
			fmt.Printf("compare:   the replicas' requests per create: %s; the API server: %s\n",
				describe(requests.snapshot(), reqBefore, creates), waitAfter.since(waitBefore, creates))
			if out.firstErr != nil {
				fmt.Printf("compare:   a create failed other than by a denial: %v\n", out.firstErr)
			}
		}
		rs.stop()
	}
	return nil
}

// busyWriter returns what runs after each create: nothing, or (busy) one write of an
// unrelated ConfigMap.
func busyWriter(ctx context.Context, cl client.Client, busy bool) (func(int) error, error) {
	if !busy {
		return nil, nil
	}
	if err := cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: compare-busy}")); err != nil {
		return nil, err
	}
	cm := object("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tick, namespace: compare-busy}\ndata: {n: \"0\"}")
	if err := cl.Create(ctx, cm); err != nil {
		return nil, err
	}
	return func(i int) error {
		return cl.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"n":"%d"}}`, i))))
	}, nil
}

// startProfiles starts a CPU profile and records blocking events (10 µs and longer, and a
// sample of shorter ones) into dir, when dir is set; the returned function writes both.
func startProfiles(dir string) (func() error, error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu-c.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, err
	}
	runtime.SetBlockProfileRate(int((10 * time.Microsecond).Nanoseconds()))
	return func() error {
		pprof.StopCPUProfile()
		runtime.SetBlockProfileRate(0)
		if err := cpu.Close(); err != nil {
			return err
		}
		block, err := os.Create(filepath.Join(dir, "block-c.pprof"))
		if err != nil {
			return err
		}
		defer block.Close()
		return pprof.Lookup("block").WriteTo(block, 0)
	}, nil
}

// phase creates n valid ColorPolicies one after another (each on its own route), calling
// after (when not nil) untimed after each, and returns the sorted latencies.
func phase(ctx context.Context, cl client.Client, ns string, n int, after func(int) error) ([]time.Duration, error) {
	if err := cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}")); err != nil && !strings.Contains(err.Error(), "already exists") {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		p := policy(ns, fmt.Sprintf("p-%d", i), fmt.Sprintf("route-%d", i))
		start := time.Now()
		if err := cl.Create(ctx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", ns, err)
		}
		out = append(out, time.Since(start))
		if after != nil {
			if err := after(i); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// admittedPatch is the JSONPatch that adds the annotations this webhook gave the first
// policy it admitted in ns.
func admittedPatch(ctx context.Context, cl client.Client, ns string) ([]byte, error) {
	got := policy(ns, "p-0", "")
	if err := cl.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
		return nil, err
	}
	annotations := got.GetAnnotations()
	if annotations[impact.AnnotationImpact] == "" {
		return nil, fmt.Errorf("%s/p-0 has no %s annotation: was it admitted by this webhook?", ns, impact.AnnotationImpact)
	}
	return json.Marshal([]map[string]any{{"op": "add", "path": "/metadata/annotations", "value": annotations}})
}

// waitDenied waits until a malformed policy is rejected: the admission check is in place.
func waitDenied(ctx context.Context, cl client.Client, ns string) error {
	_ = cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}"))
	bad := policy(ns, "probe", "r")
	bad.Object["spec"].(map[string]any)["targetRefs"] = []any{map[string]any{"group": "", "kind": "Service", "name": "s"}}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := cl.Create(ctx, bad.DeepCopy(), client.DryRunAll); err != nil {
			return nil
		}
	}
	return fmt.Errorf("the admission check in %s did not take effect within 30s", ns)
}

func policy(ns, name, route string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": route}},
			"color":      "red",
		},
	}}
}

func object(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		panic(err)
	}
	return u
}

func pct(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(float64(len(sorted)-1)*p/100)].Round(time.Microsecond)
}

func ratio(x, y []time.Duration, p float64) float64 {
	return float64(pct(x, p)) / float64(pct(y, p))
}

func report(name string, d []time.Duration) {
	fmt.Printf("compare: %-40s median %-10s p99 %s (%d creates)\n", name, pct(d, 50), pct(d, 99), len(d))
}

// The checks of the four verdicts that CEL can express on one object: reference format and
// allowed kinds, and one merge strategy. (Grants, conflicts and existence need other
// objects, which a ValidatingAdmissionPolicy cannot see.)
const vap = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: colorpolicy-format}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [policies.controller.io]
      apiVersions: ["*"]
      operations: [CREATE, UPDATE]
      resources: [colorpolicies]
  validations:
  - expression: >-
      has(object.spec.targetRefs) && size(object.spec.targetRefs) >= 1 && size(object.spec.targetRefs) <= 16 &&
      object.spec.targetRefs.all(r,
        r.group == 'gateway.networking.k8s.io' && r.kind in ['Gateway', 'HTTPRoute'] &&
        size(r.name) >= 1 && size(r.name) <= 253 &&
        (!has(r.namespace) || r.namespace.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')) &&
        (!has(r.sectionName) || r.sectionName.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')))
    message: "InvalidTargetRef: targetRefs must name a Gateway or HTTPRoute in gateway.networking.k8s.io"
  - expression: >-
      (has(object.spec.defaults) ? 1 : 0) + (has(object.spec.overrides) ? 1 : 0) +
      (object.spec.exists(k, !(k in ['targetRefs', 'defaults', 'overrides', 'strategy'])) ? 1 : 0) <= 1
    message: "MultipleMergeStrategies: declare one of bare rules, defaults or overrides"
  - expression: "!has(object.spec.strategy) || object.spec.strategy in ['atomic', 'patch']"
    message: "MultipleMergeStrategies: strategy must be atomic or patch"
`

const vapBinding = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: colorpolicy-format}
spec:
  policyName: colorpolicy-format
  validationActions: [Deny]
`
