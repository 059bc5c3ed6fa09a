package merge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func TestFoldProvenance(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.OneRoute+`
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-patch, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {strategy: patch, colors: {dark: brown, light: red}, width: 2}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: rule, namespace: app, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: main}]
  colors: {light: blue}`)
	row := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	paths := topology.PathsThrough(snap, row, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "app", Name: "gw"})
	if assert.Len(t, paths, 1) {
		e := merge.Fold(snap, row, paths[0], merge.NewCache())
		assert.Equal(t, map[string]any{"colors": map[string]any{"dark": "brown", "light": "blue"}, "width": int64(2)}, e.Spec(),
			"patch defaults from the Gateway are filled under the rule's more specific value")
		assert.Equal(t, map[string]string{"colors.dark": "app/gw-patch", "colors.light": "app/rule", "width": "app/gw-patch"}, e.Sources())
	}
	gwPatch, _ := snap.GetPolicy(row.GroupKind(), "app", "gw-patch")
	im := impact.Of(snap, gwPatch, nil)
	assert.Equal(t, impact.Impact{Status: impact.StatusPartiallyEnforced, Contexts: 1, PartiallyEnforced: 1,
		Overrides: []string{}, OverriddenBy: []string{"app/rule"}, ObservedAt: "2024-01-01T00:00:01Z"}, im)
	assert.Equal(t, "Patch defaults on Gateway app/gw: enforced on 0 of 1 path, partially on 1 by app/rule", im.Summary(gwPatch))
}

// Of two policies at one attachment point (both admitted, as under Warn enforcement), the
// row's order decides which wins where they overlap: GEP-713 lets the newer of two
// defaults win and the older of two overrides; oldestWins lets the older win both.
func TestFoldSameLevelOrder(t *testing.T) {
	world := func(t *testing.T, table *kinds.KindTable, stanza string) *index.Snapshot {
		colour := func(name, ts, value string) string {
			return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + ts + `"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  ` + stanza + `: {color: ` + value + `}`
		}
		return rulestest.World(t, table, rulestest.OneRoute,
			colour("older", "2024-01-01T00:00:00Z", "red"), colour("newer", "2024-01-02T00:00:00Z", "blue"))
	}
	for _, tc := range []struct {
		order  kinds.Order
		stanza string
		want   string
	}{
		{kinds.OrderGEP, "defaults", "app/newer"},
		{kinds.OrderGEP, "overrides", "app/older"},
		{kinds.OrderOldestWins, "defaults", "app/older"},
		{kinds.OrderOldestWins, "overrides", "app/older"},
	} {
		t.Run(string(tc.order)+" "+tc.stanza, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			row := *rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
			row.Order = tc.order
			require.NoError(t, table.Put(row))
			snap := world(t, table, tc.stanza)
			stored := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
			paths := topology.PathsThrough(snap, stored, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "app", Name: "gw"})
			require.Len(t, paths, 1)
			assert.Equal(t, map[string]string{"color": tc.want}, merge.Fold(snap, stored, paths[0], merge.NewCache()).Sources())
		})
	}
}

// nameFirst (Envoy AI Gateway's QuotaPolicy): of two policies at one attachment point the
// first by namespace/name wins, the newer as well as the older.
func TestFoldSameLevelNameFirst(t *testing.T) {
	for _, names := range [][2]string{{"a", "b"}, {"b", "a"}} { // older, newer
		t.Run(names[0]+" older", func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			row := *rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
			row.Order = kinds.OrderNameFirst
			require.NoError(t, table.Put(row))
			colour := func(name, ts, value string) string {
				return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + ts + `"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: ` + value + `}`
			}
			snap := rulestest.World(t, table, rulestest.OneRoute,
				colour(names[0], "2024-01-01T00:00:00Z", "red"), colour(names[1], "2024-01-02T00:00:00Z", "blue"))
			stored := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
			paths := topology.PathsThrough(snap, stored, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "app", Name: "gw"})
			require.Len(t, paths, 1)
			assert.Equal(t, map[string]string{"color": "app/a"}, merge.Fold(snap, stored, paths[0], merge.NewCache()).Sources())
		})
	}
}

// Envoy Gateway's mergeType is declared by the lower policy: a route's BackendTrafficPolicy
// with mergeType merges into its Gateway's; without it, the route's wins whole.
func TestFoldStrategyDeclaredByTheLower(t *testing.T) {
	world := func(t *testing.T, table *kinds.KindTable, mergeType string) *index.Snapshot {
		return rulestest.World(t, table, rulestest.OneRoute+`
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: gateway-wide, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: {http: {requestTimeout: 10s}}
  retry: {numRetries: 3}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: route, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  `+mergeType+`
  timeout: {http: {requestTimeout: 5s}}`)
	}
	for _, tc := range []struct {
		mergeType string
		want      map[string]string
	}{
		{"mergeType: StrategicMerge", map[string]string{"timeout.http.requestTimeout": "app/route", "retry.numRetries": "app/gateway-wide"}},
		{"", map[string]string{"timeout.http.requestTimeout": "app/route"}},
	} {
		t.Run(tc.mergeType, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			snap := world(t, table, tc.mergeType)
			row := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
			paths := topology.PathsThrough(snap, row, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})
			require.Len(t, paths, 1)
			assert.Equal(t, tc.want, merge.Fold(snap, row, paths[0], merge.NewCache()).Sources())
		})
	}
}

// Atomic never mixes: a higher policy's atomic defaults contribute nothing on a path where
// a lower policy's override sets the block, whatever the override's own strategy (the
// higher of the pair dictates: the lower takes the block whole).
func TestFoldAtomicDefaultsNeverMixWithALowerOverride(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.OneRoute+`
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gateway-atomic, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {colors: {light: red, dark: brown}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-patch, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  overrides: {strategy: patch, colors: {light: blue}}`)
	row := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	paths := topology.PathsThrough(snap, row, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})
	require.Len(t, paths, 1)
	e := merge.Fold(snap, row, paths[0], merge.NewCache())
	assert.Equal(t, map[string]string{"colors.light": "app/route-patch"}, e.Sources())
	assert.Equal(t, map[string]any{"colors": map[string]any{"light": "blue"}}, e.Spec())

	gateway, _ := snap.GetPolicy(row.GroupKind(), "app", "gateway-atomic")
	assert.Equal(t, impact.Impact{Status: impact.StatusOverridden, Contexts: 1, Overridden: 1,
		Overrides: []string{}, OverriddenBy: []string{"app/route-patch"}}, impact.Of(snap, gateway, nil))
}

// Envoy Gateway's two merge types on lists, re-expressed from its
// internal/gatewayapi/testdata/backendtrafficpolicy-compression-strategic-merge.in.yaml and
// backendtrafficpolicy-compression-json-merge.in.yaml (commit d32f2829): StrategicMerge
// merges compression by type (Brotli, Zstd and the Gateway's Gzip), JSONMerge replaces the
// list (Brotli, Zstd), and a null removes what the Gateway set (RFC 7386).
func TestFoldMergeTypesOnListsAndNulls(t *testing.T) {
	world := func(t *testing.T, table *kinds.KindTable, route string) *index.Snapshot {
		return rulestest.World(t, table, rulestest.OneRoute+`
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: gateway-wide, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  compression: [{type: Gzip}]
  retry: {numRetries: 3, perRetry: {timeout: 1s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: route, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  `+route)
	}
	for name, tc := range map[string]struct {
		route       string
		wantSources map[string]string
		wantSpec    map[string]any
	}{
		"StrategicMerge merges keyed lists by key": {
			route: "mergeType: StrategicMerge\n  compression: [{type: Brotli}, {type: Zstd}]",
			wantSources: map[string]string{
				"compression[type=Gzip].type": "app/gateway-wide", "compression[type=Brotli].type": "app/route", "compression[type=Zstd].type": "app/route",
				"retry.numRetries": "app/gateway-wide", "retry.perRetry.timeout": "app/gateway-wide"},
			// Envoy Gateway's expected output: the route's Brotli and Zstd, then the Gateway's Gzip.
			wantSpec: map[string]any{"compression": []any{map[string]any{"type": "Brotli"}, map[string]any{"type": "Zstd"}, map[string]any{"type": "Gzip"}},
				"retry": map[string]any{"numRetries": int64(3), "perRetry": map[string]any{"timeout": "1s"}}},
		},
		"JSONMerge replaces lists whole": {
			route:       "mergeType: JSONMerge\n  compression: [{type: Brotli}, {type: Zstd}]",
			wantSources: map[string]string{"compression": "app/route", "retry.numRetries": "app/gateway-wide", "retry.perRetry.timeout": "app/gateway-wide"},
			wantSpec: map[string]any{"compression": []any{map[string]any{"type": "Brotli"}, map[string]any{"type": "Zstd"}},
				"retry": map[string]any{"numRetries": int64(3), "perRetry": map[string]any{"timeout": "1s"}}},
		},
		"a null removes what the Gateway set": {
			route:       "mergeType: JSONMerge\n  retry: {perRetry: null}",
			wantSources: map[string]string{"compression[type=Gzip].type": "app/gateway-wide", "retry.numRetries": "app/gateway-wide"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			snap := world(t, table, tc.route)
			row := rulestest.MustRow(t, table, "gateway.envoyproxy.io", "BackendTrafficPolicy")
			paths := topology.PathsThrough(snap, row, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r1"})
			require.Len(t, paths, 1)
			e := merge.Fold(snap, row, paths[0], merge.NewCache())
			assert.Equal(t, tc.wantSources, e.Sources())
			if tc.wantSpec != nil {
				assert.Equal(t, tc.wantSpec, e.Spec())
			}
			// The route's policy stands wherever it set (or removed) something.
			route, _ := snap.GetPolicy(row.GroupKind(), "app", "route")
			assert.Equal(t, impact.StatusEnforced, impact.Of(snap, route, nil).Status)
		})
	}
}
