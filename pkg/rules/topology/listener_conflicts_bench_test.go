package topology_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// BenchmarkPathsThroughAListenerSetRoute is the walk up from a route on one ListenerSet of a
// Gateway shared by many, each with a listener of its own hostname on port 80 and one in
// ten repeating another's (whether the route's listener carries it depends on every
// ListenerSet of the Gateway: lostOne scans them), and the walk down from the Gateway
// (which judges all its listeners at once).
func BenchmarkPathsThroughAListenerSetRoute(b *testing.B) {
	table := kinds.BuiltinKindTable()
	color := rulestest.MustRow(b, table, "policies.controller.io", "ColorPolicy")
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("listenersets=%d", n), func(b *testing.B) {
			docs := []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: web, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: team-0}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team-0}
spec:
  parentRefs: [{name: ls, kind: ListenerSet}]
  rules: [{name: main, backendRefs: [{name: b1, port: 80}]}]`}
			for i := range n {
				host := i
				if i%10 == 9 {
					host = i - 1
				}
				docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: team-%d, creationTimestamp: "2024-01-01T00:%02d:%02dZ"}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: web, protocol: HTTP, port: 80, hostname: host-%d.example.com}]`, i, i/60%60, i%60, host))
			}
			snap := rulestest.World(b, table, strings.Join(docs, "\n---\n"))
			for from, key := range map[string]policy.TargetKey{
				"route":   {Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "team-0", Name: "r"},
				"gateway": {Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"},
			} {
				b.Run("from="+from, func(b *testing.B) {
					if got := len(topology.PathsThrough(snap, color, key)); got != 1 {
						b.Fatalf("%d paths, want 1", got)
					}
					b.ReportAllocs()
					for b.Loop() {
						topology.PathsThrough(snap, color, key)
					}
				})
			}
		})
	}
}
