package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// TestExplainGolden runs `webhook explain -o json` and `webhook check -o json` over each
// testdata/explain/<case>/in.yaml (with config.yaml and a target file when present) and
// compares them with want.json and check.json. UPDATE_GOLDEN=1 rewrites the files.
func TestExplainGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/explain/*")
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			common := []string{"-f", filepath.Join(dir, "in.yaml"), "-o", "json"}
			if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
				common = append(common, "--config", filepath.Join(dir, "config.yaml"))
			}
			explainArgs := append([]string{"explain"}, common...)
			if target, err := os.ReadFile(filepath.Join(dir, "target")); err == nil {
				explainArgs = append(explainArgs, "--target", strings.TrimSpace(string(target)))
			}
			code, out, errOut := runCLI(t, "", explainArgs...)
			require.Equal(t, 0, code, errOut)
			golden(t, filepath.Join(dir, "want.json"), out)

			_, out, errOut = runCLI(t, "", append([]string{"check"}, common...)...)
			require.Empty(t, errOut)
			golden(t, filepath.Join(dir, "check.json"), out)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run with UPDATE_GOLDEN=1")
	assert.Equal(t, string(want), got)
}

// explained runs explain on a golden case and indexes its output for assertions.
func explained(t *testing.T, dir string) (statuses map[string]impact.PolicyStatus, colours map[string]map[string]any) {
	t.Helper()
	args := []string{"explain", "-f", filepath.Join("testdata/explain", dir, "in.yaml"), "-o", "json"}
	if _, err := os.Stat(filepath.Join("testdata/explain", dir, "config.yaml")); err == nil {
		args = append(args, "--config", filepath.Join("testdata/explain", dir, "config.yaml"))
	}
	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, 0, code, errOut)
	var ex impact.Explanation
	require.NoError(t, json.Unmarshal([]byte(out), &ex))
	statuses = map[string]impact.PolicyStatus{}
	for _, p := range ex.Policies {
		statuses[p.Name] = p
	}
	colours = map[string]map[string]any{}
	for _, p := range ex.Paths {
		colours[strings.Join(p.Path, " > ")] = p.Effective
	}
	return statuses, colours
}

// The GEP-713 Standard worked examples, outcome by outcome, independent of the goldens.
func TestGEP713ExamplesExplained(t *testing.T) {
	const (
		g1r1b1 = "Gateway default/g1 > Listener http > HTTPRoute default/r1 > Rule 0 > Service default/b1"
		g1r2b1 = "Gateway default/g1 > Listener http > HTTPRoute default/r2 > Rule 0 > Service default/b1"
		g2r3b1 = "Gateway default/g2 > Listener http > HTTPRoute default/r3 > Rule 0 > Service default/b1"
		g2r4b2 = "Gateway default/g2 > Listener http > HTTPRoute default/r4 > Rule 0 > Service default/b2"
	)
	t.Run("Example 1", func(t *testing.T) {
		statuses, colours := explained(t, "gep-713-example-1")
		assert.Equal(t, map[string]map[string]any{"Service default/b1": {"color": "red"}}, colours, "1-3: b1 red; b2 unaffected")
		assert.Equal(t, impact.StatusEnforced, statuses["p1"].Status, "4: p1 enforced")
		assert.Equal(t, impact.StatusOverridden, statuses["p2"].Status, "5: p2 not enforced")
		assert.Equal(t, []string{"default/p1"}, statuses["p2"].OverriddenBy, "5: due to conflict with p1")
	})
	t.Run("Example 2", func(t *testing.T) {
		statuses, colours := explained(t, "gep-713-example-2")
		assert.Equal(t, map[string]map[string]any{
			g1r1b1: {"color": "blue"}, g1r2b1: {"color": "red"},
			g2r3b1: {"color": "yellow"}, g2r4b2: {"color": "yellow"},
		}, colours)
		assert.Equal(t, impact.StatusPartiallyEnforced, statuses["p1"].Status)
		assert.Equal(t, impact.StatusEnforced, statuses["p2"].Status)
		assert.Equal(t, impact.StatusEnforced, statuses["p3"].Status)
		assert.Equal(t, impact.StatusOverridden, statuses["p4"].Status)
		assert.Equal(t, []string{"default/p3"}, statuses["p4"].OverriddenBy)
	})
	t.Run("Example 3", func(t *testing.T) {
		statuses, colours := explained(t, "gep-713-example-3")
		assert.Equal(t, map[string]map[string]any{
			g1r1b1: {"colors": map[string]any{"light": "blue"}},
			g1r2b1: {"colors": map[string]any{"dark": "brown", "light": "red"}},
			g2r3b1: {"colors": map[string]any{"light": "yellow"}},
			g2r4b2: {"colors": map[string]any{"dark": "olive", "light": "yellow"}},
		}, colours)
		assert.Equal(t, impact.StatusPartiallyEnforced, statuses["p1"].Status)
		assert.Equal(t, impact.StatusEnforced, statuses["p2"].Status)
		assert.Equal(t, impact.StatusEnforced, statuses["p3"].Status)
		assert.Equal(t, impact.StatusPartiallyEnforced, statuses["p4"].Status)
	})
}

// TestGEP713ExamplesAtAdmission checks the impact annotations `check` predicts when each
// policy is admitted, in document order: a prediction of that moment, not of the end state.
func TestGEP713ExamplesAtAdmission(t *testing.T) {
	want := map[string]map[string]string{
		"gep-713-example-2": {"p1": "Enforced", "p2": "Enforced", "p3": "Enforced", "p4": "Overridden"},
		"gep-713-example-3": {"p1": "Enforced", "p2": "Enforced", "p3": "Enforced", "p4": "PartiallyEnforced"},
	}
	for dir, statuses := range want {
		t.Run(dir, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "check", "-f", filepath.Join("testdata/explain", dir, "in.yaml"), "-o", "json")
			require.Equal(t, 0, code, errOut)
			var report check.Report
			require.NoError(t, json.Unmarshal([]byte(out), &report))
			got := map[string]string{}
			for _, r := range report.Results {
				var im impact.Impact
				require.NoError(t, json.Unmarshal([]byte(r.Annotations[impact.AnnotationImpact]), &im))
				got[r.Name] = im.Status
			}
			assert.Equal(t, statuses, got)
		})
	}
	_, out, _ := runCLI(t, "", "check", "-f", "testdata/explain/gep-713-example-2/in.yaml", "-o", "json")
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, "Atomic defaults on HTTPRoute default/r4: enforced on 0 of 1 path, overridden on 1 by default/p3 (predicted at admission)",
		report.Results[3].Annotations[impact.AnnotationImpactSummary])
	assert.JSONEq(t, `{"status":"Overridden","contexts":1,"enforced":0,"partiallyEnforced":0,"overridden":1,
		"overrides":[],"overriddenBy":["default/p3"],"observedAt":"2024-01-01T00:00:11Z",
		"ancestors":[{"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","namespace":"default","name":"g2"},
			"accepted":"Accepted","status":"Overridden","contexts":1,
			"targets":[{"targetRef":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"default","name":"r4"},
				"accepted":"Accepted","status":"Overridden","contexts":1}]}]}`,
		report.Results[3].Annotations[impact.AnnotationImpact])
}

func pathsOf(colours map[string]map[string]any) []string {
	out := make([]string, 0, len(colours))
	for p := range colours {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestRouteAttachment lists exactly the paths Gateway API's attachment rules allow.
func TestRouteAttachment(t *testing.T) {
	_, colours := explained(t, "route-attachment")
	assert.Equal(t, []string{
		// selected by port 8080, hostname one label under *.example.com, and two labels under
		// it (a wildcard matches one or more); host-mismatch is not
		"Gateway infra/gw > Listener all > HTTPRoute team-b/by-port > Rule 0 > Service team-b/svc",
		"Gateway infra/gw > Listener all > HTTPRoute team-b/host-two-labels > Rule 0 > Service team-b/svc",
		// GRPCRoute admitted by the kinds restriction; the HTTPRoute on grpc-only is not
		"Gateway infra/gw > Listener grpc-only > GRPCRoute team-a/grpc > Rule 0 > Service team-a/grpc-svc",
		// Same namespace; other-ns (team-b) is not
		"Gateway infra/gw > Listener same > HTTPRoute infra/same-ns > Rule 0 > Service infra/svc",
		// Selector team=a; not-selected (team-b) is not; the ungranted backend in team-b is dropped
		"Gateway infra/gw > Listener selected > HTTPRoute team-a/selected > Rule cross > Service infra/shared",
		"Gateway infra/gw > Listener selected > HTTPRoute team-a/selected > Rule local > Service team-a/svc",
	}, pathsOf(colours))
	assert.Equal(t, map[string]any{"color": "green"},
		colours["Gateway infra/gw > Listener selected > HTTPRoute team-a/selected > Rule cross > Service infra/shared"],
		"a policy on the named rule is more specific than the Gateway's defaults")
}

// TestListenerSetHostnameConflict: of the conformance test's listeners, those not accepted
// carry no path, and the policies on them reach nothing and override nothing.
func TestListenerSetHostnameConflict(t *testing.T) {
	statuses, paths := explained(t, "listenerset-hostname-conflict")
	const (
		gw    = "Gateway gateway-conformance-infra/gateway-with-listenerset-hostname-conflict > "
		route = " > HTTPRoute gateway-conformance-infra/on-every-parent > Rule main"
		set   = "ListenerSet gateway-conformance-infra/listenerset-with-hostname-conflict-with-"
	)
	assert.Equal(t, []string{
		gw + "Listener gateway-listener" + route,
		gw + "Listener hostname-conflict-with-gateway-listener" + route,
		gw + set + "gateway-1 > Listener hostname-conflict-with-listener-set-listener" + route,
		gw + set + "gateway-1 > Listener listener-set-1-listener" + route,
		gw + set + "listener-set-1 > Listener listener-set-2-listener" + route,
	}, pathsOf(paths))
	assert.Equal(t, impact.StatusNoTargets, statuses["on-conflicted-listener"].Status)
	assert.Equal(t, impact.StatusNoTargets, statuses["on-listenerset-not-accepted"].Status)
	assert.Equal(t, []string{"gateway-conformance-infra/on-accepted-listener"}, statuses["gateway-wide"].OverriddenBy)
}

// TestKuadrantMatrix is the Kuadrant RFC's D/O matrix: which limits reach the route rule.
func TestKuadrantMatrix(t *testing.T) {
	_, colours := explained(t, "kuadrant-matrix")
	limits := func(cell string) []string {
		eff := colours["Gateway "+cell+"/gw > Listener http > HTTPRoute "+cell+"/api > Rule main"]
		var out []string
		for name, v := range eff["limits"].(map[string]any) {
			rate := v.(map[string]any)["rates"].([]any)[0].(map[string]any)["limit"]
			out = append(out, fmt.Sprintf("%s=%v", name, rate))
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, []string{"burst=10", "per-user=5"}, limits("atomic-defaults"), "lower entire set of rules")
	assert.Equal(t, []string{"burst=10", "global=1000", "per-user=5"}, limits("merge-defaults"), "lower rule wins each conflict")
	assert.Equal(t, []string{"global=1000", "per-user=100"}, limits("atomic-overrides"), "higher entire set of rules")
	assert.Equal(t, []string{"burst=10", "global=1000", "per-user=100"}, limits("merge-overrides"), "higher rule wins each conflict")
}

// TestExperimentalTablesExplained checks the table cells (see in.yaml for each cell).
func TestExperimentalTablesExplained(t *testing.T) {
	_, colours := explained(t, "experimental-tables")
	want := map[string]string{
		"defaults-chain": "503", "overrides-chain": "501", "mixed": "502",
		"same-level-overrides": "501", "same-level-defaults": "502",
	}
	for ns, code := range want {
		eff := colours["Gateway "+ns+"/gw > Listener http > HTTPRoute "+ns+"/route"]
		assert.Equal(t, []any{code}, eff["retryOn"], ns)
	}
}

// TestRemoveDeactivation is the Kuadrant RFC's Examples F1 and F2.
func TestRemoveDeactivation(t *testing.T) {
	_, colours := explained(t, "kuadrant-remove")
	keys := func(ns string) []string {
		var out []string
		for k := range colours["Gateway "+ns+"/gw > Listener http > HTTPRoute "+ns+"/route"]["limits"].(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, []string{"b", "c"}, keys("f1"), "F1: the default rule a is deactivated")
	assert.Equal(t, []string{"a", "b", "c"}, keys("f2"), "F2: an override cannot be deactivated")
}

// TestExplainKeyedListsAsWritten: Envoy Gateway's StrategicMerge merges httpUpgrade and
// compression by type, and explain shows them as the policies wrote them, in the order
// Envoy Gateway's own expected output has (testdata/explain/envoy-gateway-strategic-merge):
// lists, not maps keyed by type, and spdy/3.1, not the fold's spdy/3_1; text and JSON alike.
func TestExplainKeyedListsAsWritten(t *testing.T) {
	statuses, effective := explained(t, "envoy-gateway-strategic-merge")
	route := effective["Gateway envoy-gateway/gateway-1 > Listener http > HTTPRoute default/httproute-1 > Rule 0"]
	assert.Equal(t, []any{map[string]any{"type": "spdy/3.1"}, map[string]any{"type": "websocket"}}, route["httpUpgrade"])
	assert.Equal(t, []any{map[string]any{"type": "Brotli"}, map[string]any{"type": "Zstd"}, map[string]any{"type": "Gzip"}}, route["compression"])
	assert.Equal(t, "PartiallyEnforced", statuses["policy-for-gateway"].Status, "merged on httproute-1, overridden on grpcroute-1")
	assert.Equal(t, "Enforced", statuses["merged-policy-for-route"].Status)

	code, out, errOut := runCLI(t, "", "explain", "-f", "testdata/explain/envoy-gateway-strategic-merge/in.yaml")
	require.Equal(t, 0, code, errOut)
	for _, line := range []string{
		`    httpUpgrade[type=spdy/3.1].type: "spdy/3.1"  (from default/merged-policy-for-route)`,
		`    httpUpgrade[type=websocket].type: "websocket"  (from envoy-gateway/policy-for-gateway)`,
		`    compression[type=Gzip].type: "Gzip"  (from envoy-gateway/policy-for-gateway)`,
		`    timeout.tcp.connectTimeout: "10s"  (from default/merged-policy-for-route)`,
	} {
		assert.Contains(t, out, line+"\n")
	}
	assert.NotContains(t, out, "spdy/3_1")
}
