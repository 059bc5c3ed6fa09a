package rules_test

import (
	"fmt"
	"testing"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// clusterSize is a synthetic cluster: Gateways with two listeners, HTTPRoutes with ten
// named rules, one Service per route, and policies spread over five kinds. Route r carries
// the label release=r<r/100>: one route per namespace and release, a hundred routes per
// release in all, whatever the cluster's size; ten BackendTrafficPolicies select by it.
type clusterSize struct{ gateways, routes, policies int }

func (c clusterSize) String() string {
	return fmt.Sprintf("gateways=%d/routes=%d/policies=%d", c.gateways, c.routes, c.policies)
}

func buildCluster(b *testing.B, table *kinds.KindTable, size clusterSize) *index.Snapshot {
	b.Helper()
	snap := index.New()
	for g := 0; g < size.gateways; g++ {
		snap.AddObject(topology.NewObject(kinds.GatewayGroup, "Gateway", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("gw-%d", g), "namespace": "infra"},
			"spec": map[string]any{"listeners": []any{
				map[string]any{"name": "http"}, map[string]any{"name": "https"},
			}},
		}))
	}
	for r := 0; r < size.routes; r++ {
		ns := fmt.Sprintf("app-%d", r%100)
		rules := make([]any, 10)
		for i := range rules {
			rules[i] = map[string]any{"name": fmt.Sprintf("rule-%d", i)}
		}
		snap.AddObject(topology.NewObject(kinds.GatewayGroup, "HTTPRoute", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("route-%d", r), "namespace": ns, "labels": map[string]any{"release": fmt.Sprintf("r%d", r/100)}},
			"spec":     map[string]any{"rules": rules},
		}))
		snap.AddObject(topology.NewObject(kinds.CoreGroup, "Service", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("svc-%d", r), "namespace": ns},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "https"}}},
		}))
	}
	color := rulestest.MustRow(b, table, "policies.controller.io", "ColorPolicy")
	btls := rulestest.MustRow(b, table, kinds.GatewayGroup, "BackendTLSPolicy")
	rlp := rulestest.MustRow(b, table, "kuadrant.io", "RateLimitPolicy")
	for i := 0; i < size.policies; i++ {
		r := i % size.routes
		ns := fmt.Sprintf("app-%d", r%100)
		meta := map[string]any{"name": fmt.Sprintf("p-%d", i), "namespace": ns, "creationTimestamp": "2024-01-01T00:00:00Z"}
		var p *policy.Policy
		switch i % 5 {
		case 0:
			p = policy.NewPolicy(color, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "Gateway", "name": fmt.Sprintf("gw-%d", i%size.gateways), "namespace": "infra"}},
				"overrides":  map[string]any{"strategy": "patch", "colors": map[string]any{"light": fmt.Sprintf("c%d", i)}},
			}})
		case 1, 2:
			p = policy.NewPolicy(color, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r), "sectionName": fmt.Sprintf("rule-%d", i%10)}},
				"color":      "blue",
			}})
		case 3:
			p = policy.NewPolicy(btls, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"},
			}})
		default:
			p = policy.NewPolicy(rlp, map[string]any{"metadata": meta, "spec": map[string]any{
				"targetRef": map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)},
				"defaults": map[string]any{"strategy": "merge", "limits": map[string]any{
					"per-user": map[string]any{"rates": []any{map[string]any{"limit": int64(10), "window": "1m"}}},
				}},
			}})
		}
		snap.PutPolicy(p)
	}
	btp := rulestest.MustRow(b, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
	for i := 0; i < 10; i++ {
		snap.PutPolicy(policy.NewPolicy(btp, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("selecting-%d", i), "namespace": fmt.Sprintf("app-%d", i), "creationTimestamp": "2024-01-01T00:00:00Z"},
			"spec": map[string]any{
				"targetSelectors":   []any{map[string]any{"kind": "HTTPRoute", "matchLabels": map[string]any{"release": "r2"}}},
				"useClientProtocol": true,
			}}))
	}
	snap.PutPolicy(policy.NewPolicy(btp, map[string]any{
		"metadata": map[string]any{"name": "by-ref", "namespace": "app-3", "creationTimestamp": "2024-01-01T00:00:00Z"},
		"spec": map[string]any{
			"targetRefs":        []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": "route-303"}},
			"useClientProtocol": true,
		}}))
	return snap
}

// BenchmarkEvaluate judges one incoming policy per kind of verdict. The per-review cost
// must stay flat as the cluster grows: every lookup is by index, none lists the world.
func BenchmarkEvaluate(b *testing.B) {
	table := kinds.BuiltinKindTable()
	incoming := map[string]map[string]any{
		// Patch overrides on a Gateway that already carries one: scalar comparison.
		"colorpolicy-gateway-patch": {
			"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": "new", "namespace": "infra"},
			"spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": kinds.GatewayGroup, "kind": "Gateway", "name": "gw-0"}},
				"overrides":  map[string]any{"strategy": "patch", "colors": map[string]any{"light": "red", "dark": "brown"}},
			},
		},
		// A Direct policy on a Service port that already has one: denied Conflicted.
		"backendtlspolicy-conflict": {
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": map[string]any{"name": "new", "namespace": "app-3"},
			"spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "svc-3", "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"},
			},
		},
		// A selector that selects, through the label index, the one route of its release in
		// its namespace, which an older policy names: denied Conflicted.
		"backendtrafficpolicy-selector-conflict": {
			"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
			"metadata": map[string]any{"name": "new", "namespace": "app-3"},
			"spec": map[string]any{
				"targetSelectors":   []any{map[string]any{"kind": "HTTPRoute", "matchLabels": map[string]any{"release": "r3"}}},
				"useClientProtocol": true,
			},
		},
		// A route an older policy selects: found by checking the kind's selecting policies.
		"backendtrafficpolicy-selected-route": {
			"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
			"metadata": map[string]any{"name": "new", "namespace": "app-4"},
			"spec": map[string]any{
				"targetRefs":        []any{map[string]any{"group": kinds.GatewayGroup, "kind": "HTTPRoute", "name": "route-204"}},
				"useClientProtocol": true,
			},
		},
		// Cross-namespace target without a grant, and two strategies: three rules deny.
		"colorpolicy-denied-everything": {
			"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": "new", "namespace": "app-1"},
			"spec": map[string]any{
				"targetRefs": []any{
					map[string]any{"group": kinds.GatewayGroup, "kind": "Gateway", "name": "gw-1", "namespace": "infra"},
					map[string]any{"group": "", "kind": "Service", "name": "svc-1"},
				},
				"defaults":  map[string]any{"color": "red"},
				"overrides": map[string]any{"color": "red"},
			},
		},
	}
	sizes := []clusterSize{{100, 1000, 500}, {1000, 10000, 5000}, {2000, 20000, 10000}}
	for _, size := range sizes {
		snap := buildCluster(b, table, size)
		for name, obj := range incoming {
			row, _ := table.Lookup(rulestest.SchemaGK(rulestest.GroupOf(obj["apiVersion"].(string)), obj["kind"].(string)))
			b.Run(size.String()+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					p := policy.NewPolicy(row, obj)
					_ = rules.Evaluate(rules.Request{Operation: rules.Create, Policy: p}, snap)
				}
			})
		}
	}
}
