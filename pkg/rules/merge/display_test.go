package merge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// upgradeRow is Envoy Gateway's BackendTrafficPolicy merge row (mergeType, lists merged by
// key under StrategicMerge, replaced under JSONMerge) with two more keyed lists: one nested
// in an object, and one keyed by two fields, one of them dotted. It is a row of its own so
// that the test does not move with the built-in table.
const upgradeRow = `
kinds:
- group: example.com
  kind: UpgradePolicy
  versions: [v1]
  class: Inherited
  targetRefFields: [targetRef, targetRefs]
  targets:
  - {group: gateway.networking.k8s.io, kind: Gateway, section: Listener}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, section: RouteRule}
  effectiveTarget: RouteRule
  conflicts: {mode: none}
  order: oldestWins
  strategy:
    field: mergeType
    values: {StrategicMerge: patch, JSONMerge: patch}
    default: atomic
    declaredBy: lower
    targetKinds: [HTTPRoute]
    listKeys: {httpUpgrade: [type], "http.compression": [type], mirrors: [name, match.path]}
    wholeLists: [JSONMerge]
`

// TestDisplayKeyedLists: the effective policy is shown in the policies' own shape. A list
// merged by key comes back as a list, the route's (lower) items first, then the Gateway's,
// each in the order written; keys are as written (spdy/3.1, not the fold's spdy/3_1), and
// every setting's source is named by the list and the item's key fields.
func TestDisplayKeyedLists(t *testing.T) {
	const gateway = `
apiVersion: example.com/v1
kind: UpgradePolicy
metadata: {name: gateway, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  httpUpgrade: [{type: websocket}, {type: CONNECT, connect: {terminate: true}}]
  http: {compression: [{type: Gzip}], idleTimeout: 16s}
  mirrors: [{name: shadow.v1, match: {path: /api/v1.0}, percent: 10}]`
	type want struct {
		spec    map[string]any
		sources map[string]string
	}
	for name, tc := range map[string]struct {
		route string
		want  want
	}{
		"StrategicMerge merges by key and shows lists as written": {
			route: `
  mergeType: StrategicMerge
  httpUpgrade: [{type: spdy/3.1}, {type: CONNECT, connect: {terminate: false}}]
  http: {compression: [{type: Brotli}]}
  mirrors: [{name: shadow.v2, match: {path: /api/v2.0/x}, percent: 5}, {name: shadow.v1, match: {path: /api/v1.0}, percent: 20}]`,
			want: want{
				spec: map[string]any{
					"httpUpgrade": []any{
						map[string]any{"type": "spdy/3.1"},
						map[string]any{"type": "CONNECT", "connect": map[string]any{"terminate": false}},
						map[string]any{"type": "websocket"},
					},
					"http": map[string]any{
						"compression": []any{map[string]any{"type": "Brotli"}, map[string]any{"type": "Gzip"}},
						"idleTimeout": "16s",
					},
					"mirrors": []any{
						map[string]any{"name": "shadow.v2", "match": map[string]any{"path": "/api/v2.0/x"}, "percent": int64(5)},
						map[string]any{"name": "shadow.v1", "match": map[string]any{"path": "/api/v1.0"}, "percent": int64(20)},
					},
				},
				sources: map[string]string{
					"httpUpgrade[type=spdy/3.1].type":                           "app/route",
					"httpUpgrade[type=CONNECT].type":                            "app/route",
					"httpUpgrade[type=CONNECT].connect.terminate":               "app/route",
					"httpUpgrade[type=websocket].type":                          "app/gateway",
					"http.compression[type=Brotli].type":                        "app/route",
					"http.compression[type=Gzip].type":                          "app/gateway",
					"http.idleTimeout":                                          "app/gateway",
					"mirrors[name=shadow.v2,match.path=/api/v2.0/x].name":       "app/route",
					"mirrors[name=shadow.v2,match.path=/api/v2.0/x].match.path": "app/route",
					"mirrors[name=shadow.v2,match.path=/api/v2.0/x].percent":    "app/route",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].name":         "app/route",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].match.path":   "app/route",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].percent":      "app/route",
				},
			},
		},
		"an item's fields from two policies make one item": {
			route: `
  mergeType: StrategicMerge
  httpUpgrade: [{type: CONNECT, timeout: 5s}]`,
			want: want{
				spec: map[string]any{
					"httpUpgrade": []any{
						map[string]any{"type": "CONNECT", "timeout": "5s", "connect": map[string]any{"terminate": true}},
						map[string]any{"type": "websocket"},
					},
					"http":    map[string]any{"compression": []any{map[string]any{"type": "Gzip"}}, "idleTimeout": "16s"},
					"mirrors": []any{map[string]any{"name": "shadow.v1", "match": map[string]any{"path": "/api/v1.0"}, "percent": int64(10)}},
				},
				sources: map[string]string{
					"httpUpgrade[type=CONNECT].type":                          "app/route",
					"httpUpgrade[type=CONNECT].timeout":                       "app/route",
					"httpUpgrade[type=CONNECT].connect.terminate":             "app/gateway",
					"httpUpgrade[type=websocket].type":                        "app/gateway",
					"http.compression[type=Gzip].type":                        "app/gateway",
					"http.idleTimeout":                                        "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].name":       "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].match.path": "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].percent":    "app/gateway",
				},
			},
		},
		"without mergeType the route's policy stands whole, as written": {
			route: `
  httpUpgrade: [{type: spdy/3.1}, {type: websocket}]`,
			want: want{
				spec: map[string]any{"httpUpgrade": []any{map[string]any{"type": "spdy/3.1"}, map[string]any{"type": "websocket"}}},
				sources: map[string]string{
					"httpUpgrade[type=spdy/3.1].type":  "app/route",
					"httpUpgrade[type=websocket].type": "app/route",
				},
			},
		},
		"JSONMerge replaces a list whole": {
			route: `
  mergeType: JSONMerge
  httpUpgrade: [{type: spdy/3.1}]`,
			want: want{
				spec: map[string]any{
					"httpUpgrade": []any{map[string]any{"type": "spdy/3.1"}},
					"http":        map[string]any{"compression": []any{map[string]any{"type": "Gzip"}}, "idleTimeout": "16s"},
					"mirrors":     []any{map[string]any{"name": "shadow.v1", "match": map[string]any{"path": "/api/v1.0"}, "percent": int64(10)}},
				},
				sources: map[string]string{
					"httpUpgrade":                      "app/route",
					"http.compression[type=Gzip].type": "app/gateway",
					"http.idleTimeout":                 "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].name":       "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].match.path": "app/gateway",
					"mirrors[name=shadow.v1,match.path=/api/v1.0].percent":    "app/gateway",
				},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			require.NoError(t, table.Load([]byte(upgradeRow), "display_test"))
			snap := rulestest.World(t, table, rulestest.OneRoute, gateway, `
apiVersion: example.com/v1
kind: UpgradePolicy
metadata: {name: route, namespace: app, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}`+tc.route)
			row := rulestest.MustRow(t, table, "example.com", "UpgradePolicy")
			paths := topology.PathsThrough(snap, row, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})
			require.Len(t, paths, 1)
			e := merge.Fold(snap, row, paths[0], merge.NewCache())
			spec, shown := e.Display()
			assert.Equal(t, tc.want.spec, spec)
			assert.Equal(t, tc.want.sources, e.Sources())
			assert.Equal(t, spec, e.Spec())
			require.Len(t, shown, len(tc.want.sources))
			for i, s := range shown {
				if i > 0 {
					assert.Less(t, shown[i-1].Name, s.Name, "settings are sorted by name")
				}
				assert.Equal(t, tc.want.sources[s.Name], s.Source, s.Name)
			}
		})
	}
}
