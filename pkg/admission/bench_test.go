package admission

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// scale is the synthetic cluster's size for these benchmarks (`go test -bench . -scale 10`):
// N times 1,000 Gateways, 10,000 HTTPRoutes, 10,000 Services and 5,000 policies.
var scale = flag.Int("scale", 1, "size of the synthetic cluster the benchmarks run against (synthetic.At)")

// syntheticSnapshot builds the synthetic cluster into a snapshot, as informer events would.
func syntheticSnapshot(b testing.TB, table *kinds.KindTable) *index.Snapshot {
	b.Helper()
	snap := index.New()
	err := synthetic.Objects(synthetic.At(*scale), func(obj map[string]any) error {
		gv, _ := schema.ParseGroupVersion(obj["apiVersion"].(string))
		gk := schema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}
		if row, ok := table.Lookup(gk); ok {
			snap.PutPolicy(policy.NewPolicy(row, obj))
			return nil
		}
		_, err := snap.AddResource(gk, obj)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkReview is one review through the real HTTP handler: decoding the
// AdmissionReview, the verdict (or the impact patch), and encoding the response.
func BenchmarkReview(b *testing.B) {
	table := kinds.BuiltinKindTable()
	store := readyStore(table, syntheticSnapshot(b, table))
	handlers := map[string]http.Handler{
		"/validate": reviewHandler("validate", &Validator{Store: store}),
		"/mutate":   reviewHandler("mutate", &Mutator{Store: store}),
		PathTargets: reviewHandler("targets", &TargetGuard{Store: store}),
	}
	mix := synthetic.Reviews(synthetic.At(*scale))
	// The deletion of a Gateway of the synthetic cluster: its ten routes, their policies and
	// Services are what the review walks (their policies are left on no path: warned).
	deleteGateway := synthetic.Review{Path: PathTargets, Allowed: true,
		Body: []byte(deleteTargetReview(kinds.GatewayGroup, "v1", "Gateway", "gateways", "infra", "gw-5", "kubernetes-admin", false))}
	// A denial is logged once (who asked, and why); "-logged" measures it with the JSON
	// logger webhook serve runs, writing nowhere. Without a logger the line is not built.
	logged := logf.IntoContext(context.Background(), zap.New(zap.WriteTo(io.Discard)))
	cases := map[string]struct {
		review synthetic.Review
		ctx    context.Context
	}{
		"validate-update-allowed":    {mix[0], context.Background()},
		"mutate-update":              {mix[1], context.Background()},
		"validate-invalid-kind":      {mix[40], context.Background()},
		"validate-conflicted":        {mix[43], context.Background()},
		"validate-conflicted-logged": {mix[43], logged},
		"targets-delete-gateway":     {deleteGateway, context.Background()},
	}
	for name, c := range cases {
		r := c.review
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				req := httptest.NewRequestWithContext(c.ctx, http.MethodPost, r.Path, bytes.NewReader(r.Body))
				req.Header.Set("Content-Type", "application/json")
				handlers[r.Path].ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"allowed":`+boolString(r.Allowed))) {
					b.Fatalf("unexpected answer: %s", rec.Body.String())
				}
			}
		})
	}
}

func boolString(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

// BenchmarkPredictGatewayPolicy predicts, as the mutating webhook does, the impact of a
// ColorPolicy overriding a Gateway that carries ten routes of ten rules at any scale: its
// cost must follow those 100 paths, not the size of the cluster (-scale).
func BenchmarkPredictGatewayPolicy(b *testing.B) {
	table := kinds.BuiltinKindTable()
	store := readyStore(table, syntheticSnapshot(b, table))
	row, _ := table.Lookup(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"})
	p := policy.NewPolicy(row, map[string]any{
		"metadata": map[string]any{"name": "platform", "namespace": "infra", "creationTimestamp": "2026-11-02T00:00:00Z"},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw-5"}},
			"overrides":  map[string]any{"strategy": "patch", "colors": map[string]any{"light": "red"}},
		},
	})
	if im, _ := store.Predict(p); im.Contexts != 100 {
		b.Fatalf("the policy reaches %d paths, want 100", im.Contexts)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = store.Predict(p)
	}
}

// BenchmarkSnapshotFromColdCache builds the whole synthetic snapshot, as at start-up.
func BenchmarkSnapshotFromColdCache(b *testing.B) {
	table := kinds.BuiltinKindTable()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = syntheticSnapshot(b, table)
	}
}

// BenchmarkGCWithSnapshot is one full garbage collection with the synthetic snapshot live:
// the marking every GC cycle of a serving webhook repeats, and what its p99 pays for. It
// also reports the collector's CPU time per collection, how many heap objects and bytes the
// snapshot holds, and how many of those bytes the collector has to scan for pointers:
// unlike the time of a collection, which varies by half between runs on a shared machine,
// those counts are exact.
func BenchmarkGCWithSnapshot(b *testing.B) {
	table := kinds.BuiltinKindTable()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	scannableBefore := scannableHeap()
	snap := syntheticSnapshot(b, table)
	runtime.GC()
	runtime.ReadMemStats(&after)
	scannable := scannableHeap() - scannableBefore
	b.ResetTimer()
	cpu0 := gcCPUSeconds()
	for i := 0; i < b.N; i++ {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric((gcCPUSeconds()-cpu0)/float64(b.N)*1000, "gc-cpu-ms/op")
	b.ReportMetric(float64(after.HeapObjects-before.HeapObjects), "snapshot-objects")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "snapshot-MiB")
	b.ReportMetric(float64(scannable)/(1<<20), "scannable-MiB")
	runtime.KeepAlive(snap)
}

// gcCPUSeconds is the CPU time the collector has used so far (all its workers): steadier
// than a collection's wall time when other processes share the cores.
func gcCPUSeconds() float64 {
	sample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(sample)
	return sample[0].Value.Float64()
}

// scannableHeap is the heap the collector scans for pointers, as of the last collection.
func scannableHeap() int64 {
	sample := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}
