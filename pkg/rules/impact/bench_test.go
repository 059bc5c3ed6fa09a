package impact

import (
	"fmt"
	"testing"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// buildAttachedCluster is the cluster for impact: 1,000 Gateways, 10,000 HTTPRoutes
// with 10 named rules each (one backend per rule), 10,000 Services, 5,000 policies. Gateway
// gw-small carries one route (10 paths), gw-big carries 1,000 routes (10,000 paths); the
// other routes spread over the other Gateways.
func buildAttachedCluster(b *testing.B, table *kinds.KindTable) *index.Snapshot {
	b.Helper()
	snap := index.New()
	const gateways, routes, policies = 1000, 10000, 5000
	gwName := func(i int) string {
		switch i {
		case 0:
			return "gw-small"
		case 1:
			return "gw-big"
		}
		return fmt.Sprintf("gw-%d", i)
	}
	for g := 0; g < gateways; g++ {
		snap.AddObject(topology.NewObject(kinds.GatewayGroup, "Gateway", map[string]any{
			"metadata": map[string]any{"name": gwName(g), "namespace": "infra"},
			"spec": map[string]any{"gatewayClassName": "example", "listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(80),
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
			}}},
		}))
	}
	parentOf := func(r int) string {
		switch {
		case r == 0:
			return "gw-small"
		case r <= 1000:
			return "gw-big"
		}
		return gwName(2 + r%(gateways-2))
	}
	for r := 0; r < routes; r++ {
		ns := fmt.Sprintf("app-%d", r%100)
		svc := fmt.Sprintf("svc-%d", r)
		rules := make([]any, 10)
		for i := range rules {
			rules[i] = map[string]any{"name": fmt.Sprintf("rule-%d", i),
				"backendRefs": []any{map[string]any{"name": svc, "port": int64(443)}}}
		}
		snap.AddObject(topology.NewObject(kinds.GatewayGroup, "HTTPRoute", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("route-%d", r), "namespace": ns, "labels": map[string]any{"release": fmt.Sprintf("r%d", r/100)}},
			"spec": map[string]any{
				"parentRefs": []any{map[string]any{"name": parentOf(r), "namespace": "infra"}},
				"rules":      rules,
			},
		}))
		snap.AddObject(topology.NewObject(kinds.CoreGroup, "Service", map[string]any{
			"metadata": map[string]any{"name": svc, "namespace": ns},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}},
		}))
	}
	color := rulestest.MustRow(b, table, "policies.controller.io", "ColorPolicy")
	btls := rulestest.MustRow(b, table, kinds.GatewayGroup, "BackendTLSPolicy")
	for i := 0; i < policies; i++ {
		r := (i * 2) % routes
		ns := fmt.Sprintf("app-%d", r%100)
		meta := map[string]any{"name": fmt.Sprintf("p-%d", i), "namespace": ns, "creationTimestamp": "2024-01-01T00:00:00Z"}
		switch i % 3 {
		case 0: // route-level defaults
			snap.PutPolicy(policy.NewPolicy(color, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)}},
				"colors":     map[string]any{"light": "blue"},
			}}))
		case 1: // rule-level patch defaults
			snap.PutPolicy(policy.NewPolicy(color, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r), "sectionName": "rule-3"}},
				"defaults":   map[string]any{"strategy": "patch", "colors": map[string]any{"dark": "olive"}},
			}}))
		default:
			snap.PutPolicy(policy.NewPolicy(btls, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"},
			}}))
		}
	}
	return snap
}

// BenchmarkImpact predicts the impact of one Gateway-level policy. Its cost must follow
// the paths the policy reaches (10 or 10,000), not the size of the cluster.
func BenchmarkImpact(b *testing.B) {
	table := kinds.BuiltinKindTable()
	snap := buildAttachedCluster(b, table)
	color := rulestest.MustRow(b, table, "policies.controller.io", "ColorPolicy")
	for _, tc := range []struct {
		gateway string
		paths   int
	}{{"gw-small", 10}, {"gw-big", 10000}} {
		p := policy.NewPolicy(color, map[string]any{
			"metadata": map[string]any{"name": "platform-" + tc.gateway, "namespace": "infra", "creationTimestamp": "2024-01-02T00:00:00Z"},
			"spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "Gateway", "name": tc.gateway}},
				"overrides":  map[string]any{"strategy": "patch", "colors": map[string]any{"light": "red"}},
			},
		})
		p = snap.PutPolicy(p)
		if got := Of(snap, p, nil).Contexts; got != tc.paths {
			b.Fatalf("%s reaches %d paths, want %d", tc.gateway, got, tc.paths)
		}
		b.Run(fmt.Sprintf("paths=%d", tc.paths), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = Of(snap, p, nil)
			}
		})
	}
	// A selector in app-3 for two releases: routes 303 and 1303 (one per namespace and
	// release; a hundred per release in the label index), ten rules each.
	btp := rulestest.MustRow(b, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
	p := snap.PutPolicy(policy.NewPolicy(btp, map[string]any{
		"metadata": map[string]any{"name": "selecting", "namespace": "app-3", "creationTimestamp": "2024-01-02T00:00:00Z"},
		"spec": map[string]any{
			"targetSelectors": []any{map[string]any{"kind": "HTTPRoute", "matchExpressions": []any{
				map[string]any{"key": "release", "operator": "In", "values": []any{"r3", "r13"}}}}},
			"useClientProtocol": true,
		},
	}))
	if got := Of(snap, p, nil).Contexts; got != 20 {
		b.Fatalf("the selector reaches %d paths, want 20", got)
	}
	b.Run("selector/paths=20", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = Of(snap, p, nil)
		}
	})
}
