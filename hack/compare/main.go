// Command compare is `make compare`: on one local control plane it measures the latency of
// creating a policy through the API server (a) with no admission webhook, (b) with a
// ValidatingAdmissionPolicy holding the single-object checks CEL can express (reference
// format, one merge strategy), (d) with a webhook pair that does nothing (allowed, no
// patch) registered exactly like this one, the floor of two webhook calls, (c) with this
// webhook, validating and mutating, and (e) the no-op pair again, its mutating half answering
// with the very annotation patch this webhook gave in (c): what the API server spends on
// applying the patch, apart from computing it. It prints the median and p99 of each and the
// ratios c/a and c/b.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/internal/localcluster"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func main() {
	n := flag.Int("n", 300, "policies created per phase")
	noLive := flag.Bool("no-live-reads", false, "run phase (c) with the webhook's live reads off (one replica)")
	flag.Parse()
	if err := run(*n, *noLive); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(n int, noLive bool) error {
	fmt.Println("compare: starting kube-apiserver and etcd...")
	cp, err := localcluster.StartControlPlane("test/crds")
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	cl, err := client.New(cp.Config, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		return err
	}
	ctx := context.Background()

	a, err := phase(ctx, cl, "compare-a", n)
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
	b, err := phase(ctx, cl, "compare-b", n)
	if err != nil {
		return err
	}
	report("(b) ValidatingAdmissionPolicy", b)
	if err := cl.Delete(ctx, object(vapBinding)); err != nil {
		return err
	}

	port, err := localcluster.FreePort()
	if err != nil {
		return err
	}
	certDir, err := os.MkdirTemp("", "compare-certs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(certDir)
	attached, err := localcluster.Attach(cp.Config, "127.0.0.1", port, certDir)
	if err != nil {
		return err
	}
	attached.NoLiveReads = noLive

	// (d): the same two configurations, the same URL and certificate, an answer that costs
	// nothing. What it adds over (a) is the API server's cost of calling two webhooks.
	stopNoop, err := serveNoop(port, certDir, nil)
	if err != nil {
		return err
	}
	d, err := phase(ctx, cl, "compare-d", n)
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
	c, err := phase(ctx, cl, "compare-c", n)
	if err != nil {
		return err
	}
	after, err := scrapeHandlerTime(attached)
	if err != nil {
		return err
	}
	name := "(c) this webhook (validate + mutate)"
	if noLive {
		name = "(c) this webhook, --live-reads=false"
	}
	report(name, c)
	fmt.Printf("compare: (c) inside the webhook's handlers, mean: %s\n", after.since(before))

	patch, err := admittedPatch(ctx, cl, "compare-c")
	if err != nil {
		return err
	}
	cancel() // stop the webhook: (e) answers on its port
	stopNoop, err = serveNoop(port, certDir, patch)
	if err != nil {
		return err
	}
	e, err := phase(ctx, cl, "compare-e", n)
	stopNoop()
	if err != nil {
		return err
	}
	report("(e) the no-op pair, answering c's patch", e)
	fmt.Printf("compare: median c/a %.2f (adds %s), c/b %.2f; p99 c/a %.2f, c/b %.2f\n",
		ratio(c, a, 50), pct(c, 50)-pct(a, 50), ratio(c, b, 50), ratio(c, a, 99), ratio(c, b, 99))
	fmt.Printf("compare: median d adds %s to a: the API server's two webhook calls; e adds %s to d: applying the annotation patch; c adds %s to e: this webhook's own work\n",
		pct(d, 50)-pct(a, 50), pct(e, 50)-pct(d, 50), pct(c, 50)-pct(e, 50))
	return nil
}

// phase creates n valid ColorPolicies one after another (each on its own route) and
// returns the sorted latencies.
func phase(ctx context.Context, cl client.Client, ns string, n int) ([]time.Duration, error) {
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
