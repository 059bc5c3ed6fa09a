package impact

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// BenchmarkTargetDeletion reviews the deletion of a Gateway carrying n routes of ten rules,
// each route with a Service and a ColorPolicy of its own, and a route of every fourth with a
// BackendTLSPolicy on its Service: the work follows the objects below the Gateway (every
// route's policy is left on no path, and named), never the rest of the cluster (a thousand
// other Gateways alike).
func BenchmarkTargetDeletion(b *testing.B) {
	table := kinds.BuiltinKindTable()
	for _, n := range []int{10, 100, 1000} {
		snap := index.New()
		add := func(gk schema.GroupKind, obj map[string]any) {
			if row, ok := table.Lookup(gk); ok {
				snap.PutPolicy(policy.NewPolicy(row, obj))
				return
			}
			if _, err := snap.AddResource(gk, obj); err != nil {
				b.Fatal(err)
			}
		}
		gatewayGK := schema.GroupKind{Group: kinds.GatewayGroup, Kind: "Gateway"}
		for g := 0; g < 1000; g++ {
			add(gatewayGK, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("gw-%d", g), "namespace": "infra"},
				"spec": map[string]any{"listeners": []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80),
					"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}}}})
		}
		for r := 0; r < n; r++ {
			ns := fmt.Sprintf("app-%d", r%10)
			rules := make([]any, 10)
			for i := range rules {
				rules[i] = map[string]any{"name": fmt.Sprintf("rule-%d", i),
					"backendRefs": []any{map[string]any{"name": fmt.Sprintf("svc-%d", r), "port": int64(443)}}}
			}
			add(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "HTTPRoute"}, map[string]any{
				"metadata": map[string]any{"name": fmt.Sprintf("route-%d", r), "namespace": ns},
				"spec":     map[string]any{"parentRefs": []any{map[string]any{"name": "gw-0", "namespace": "infra"}}, "rules": rules}})
			add(schema.GroupKind{Kind: "Service"}, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("svc-%d", r), "namespace": ns},
				"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}}})
			add(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"}, map[string]any{
				"metadata": map[string]any{"name": fmt.Sprintf("p-%d", r), "namespace": ns},
				"spec": map[string]any{"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)}},
					"color": "blue"}})
			if r%4 == 0 {
				add(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, map[string]any{
					"metadata": map[string]any{"name": fmt.Sprintf("tls-%d", r), "namespace": ns},
					"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
						"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"}}})
			}
		}
		target := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw-0"}
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d := TargetDeletionOf(snap, table, target)
				if len(d.Unreached) != n {
					b.Fatalf("%d policies left on no path, want %d", len(d.Unreached), n)
				}
				_ = d.Warnings(nil)
			}
		})
	}
}
