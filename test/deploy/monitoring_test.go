package deploy

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/admission"
)

// TestMonitoringComponent: the alerts parse with Prometheus' own rule parser, each carries a
// runbook_url to a row of the Alerts table in docs/monitoring.md, and every metric the alerts and the
// dashboard query is one the webhook exports (a renamed metric fails here); the
// ServiceMonitor scrapes the Service's metrics port over HTTPS with Prometheus' token, and
// the ClusterRole it needs is shipped; no alert or panel groups by the namespace label, which
// is empty unless --metrics-namespace-label.
func TestMonitoringComponent(t *testing.T) {
	objs := renderPath(t, filepath.Join("testdata", "with-monitoring"))
	exported := admission.MetricNames()
	require.Contains(t, exported, "policyattachment_reviews_total")
	promql := parser.NewParser(parser.Options{})
	queried := func(expr string) {
		t.Helper()
		e, err := promql.ParseExpr(expr)
		require.NoError(t, err, expr)
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(vs.Name, "_bucket"), "_sum"), "_count")
				assert.True(t, name == "up" || slices.Contains(exported, name), "%s queries %s, which the webhook does not export", expr, vs.Name)
				// The reviews counter's own namespace label (exported_namespace once Prometheus
				// adds the target's) is empty unless --metrics-namespace-label.
				for _, m := range vs.LabelMatchers {
					assert.False(t, vs.Name == "policyattachment_reviews_total" && (m.Name == "namespace" || m.Name == "exported_namespace"),
						"%s selects by the reviewed namespace, which is empty by default", expr)
				}
			}
			if agg, ok := node.(*parser.AggregateExpr); ok {
				assert.NotContains(t, agg.Grouping, "exported_namespace", "%s groups by the reviewed namespace, which is empty by default", expr)
			}
			return nil
		})
	}

	var rule unstructured.Unstructured
	decode(t, objs, "PrometheusRule/policyattachment-webhook", &rule.Object)
	spec, err := yaml.Marshal(rule.Object["spec"])
	require.NoError(t, err)
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	runbooks, err := os.ReadFile(filepath.Join("..", "..", "docs", "monitoring.md"))
	require.NoError(t, err)
	alerts := 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts++
			queried(r.Expr)
			url := r.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(url, "https://github.com/policyattachment/webhook/blob/main/docs/monitoring.md#")
			require.True(t, ok, "%s: runbook_url %q", r.Alert, url)
			assert.Equal(t, "alert-"+strings.ToLower(r.Alert), anchor, r.Alert)
			assert.True(t, strings.Contains(string(runbooks), `<a id="`+anchor+`"></a>`), "%s: docs/monitoring.md has its row", r.Alert)
			assert.NotEmpty(t, r.Labels["severity"], r.Alert)
		}
	}
	assert.Equal(t, 6, alerts)

	var monitor unstructured.Unstructured
	decode(t, objs, "ServiceMonitor/policyattachment-webhook", &monitor.Object)
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	endpoint := endpoints[0].(map[string]any)
	assert.Equal(t, "metrics", endpoint["port"])
	assert.Equal(t, "/metrics", endpoint["path"])
	assert.Equal(t, "https", endpoint["scheme"], "the metrics port serves HTTPS only")
	assert.Equal(t, "/var/run/secrets/kubernetes.io/serviceaccount/token", endpoint["bearerTokenFile"],
		"Prometheus presents its ServiceAccount's token, which the webhook has the API server review")
	var reader rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-metrics-reader", &reader)
	assert.Equal(t, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, reader.Rules)
	var svc corev1.Service
	decode(t, objs, "Service/policyattachment-webhook", &svc)
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	for k, v := range selector {
		assert.Equal(t, v, svc.Labels[k], "the ServiceMonitor selects the Service")
	}

	var dashboard corev1.ConfigMap
	decode(t, objs, "ConfigMap/policyattachment-dashboard", &dashboard)
	assert.Equal(t, "1", dashboard.Labels["grafana_dashboard"])
	var board struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(dashboard.Data["policyattachment.json"]), &board))
	require.NotEmpty(t, board.Panels)
	for _, p := range board.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			queried(regexp.MustCompile(`\$\{?\w+\}?`).ReplaceAllString(target.Expr, "x"))
		}
	}
}
