package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestAuditComparesStatuses: the audit compares what each implementation wrote into its
// policies' status with the prediction (testdata/status: Envoy Gateway's statuses produced
// by its translator, Gateway API's and Kuadrant's written as their code and spec write
// them), and reports each disagreement with both sides. Whole outputs are golden files; the
// classes are asserted here too, each one explained in the scenario's comments.
func TestAuditComparesStatuses(t *testing.T) {
	for impl, want := range map[string]struct {
		compared      int
		disagreements []string // kind namespace/name class where
	}{
		"envoy-gateway": {8, []string{
			"ClientTrafficPolicy infra/gw-client statusDiffers Gateway infra/gw",
			"SecurityPolicy app/cart-auth refusedByController Gateway infra/gw",
		}},
		"gateway-api": {5, []string{
			"BackendTLSPolicy prod/web-tls refusedByController Gateway prod/prod-gateway",
		}},
		"kuadrant": {6, []string{
			"AuthPolicy app/store-auth refusedByController the policy",
			"RateLimitPolicy app/cart-limits-b deniedByWebhook the policy",
		}},
	} {
		t.Run(impl, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "status", impl, "in.yaml"))
			require.NoError(t, err)
			docs, err := manifests.Decode("in.yaml", data)
			require.NoError(t, err)
			report, err := Audit(docs, kinds.BuiltinKindTable(), nil)
			require.NoError(t, err)
			assert.Equal(t, want.compared, report.Summary.StatusesCompared)
			var got []string
			for _, d := range report.Disagreements {
				where := "the policy"
				if d.AncestorRef != nil {
					where = d.AncestorRef.String()
				}
				got = append(got, fmt.Sprintf("%s %s/%s %s %s", d.Kind, d.Namespace, d.Name, d.Class, where))
			}
			assert.Equal(t, want.disagreements, got)
			assert.Equal(t, len(got), report.Summary.Disagreements)

			var text, js bytes.Buffer
			require.NoError(t, WriteAuditText(&text, report))
			require.NoError(t, WriteAuditJSON(&js, report))
			testkit.Golden(t, filepath.Join("testdata", "status", impl+".txt"), text.String())
			testkit.Golden(t, filepath.Join("testdata", "status", impl+".json"), js.String())
		})
	}
}

// Without statuses the audit's outputs are what they were: no line about them in the text,
// empty lists and zero counts in the JSON; -n narrows the disagreements too.
func TestAuditWithoutStatuses(t *testing.T) {
	docs, err := manifests.Decode("in.yaml", []byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`))
	require.NoError(t, err)
	report, err := Audit(docs, kinds.BuiltinKindTable(), nil)
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, WriteAuditText(&text, report))
	assert.Equal(t, "1 policies audited: 0 would be denied today\n", text.String())
	assert.Equal(t, []AuditDisagreement{}, report.Disagreements)

	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "status", "kuadrant", "in.yaml"))
	require.NoError(t, err)
	docs, err = manifests.Decode("in.yaml", data)
	require.NoError(t, err)
	report, err = Audit(docs, kinds.BuiltinKindTable(), nil)
	require.NoError(t, err)
	report.OnlyIn("infra")
	assert.Empty(t, report.Disagreements)
	assert.Zero(t, report.Summary.Disagreements)
	assert.Equal(t, 6, report.Summary.StatusesCompared, "what was compared, in every namespace")
}

// TestStatusComparisonPageShowsRealOutput: docs/status-comparison.md shows the audit of the
// Envoy Gateway scenario as it is.
func TestStatusComparisonPageShowsRealOutput(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "status-comparison.md"))
	require.NoError(t, err)
	golden, err := os.ReadFile(filepath.Join("testdata", "status", "envoy-gateway.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "```\n"+string(golden)+"```\n")
}

// Two policy kinds of one name in two groups (Kuadrant's and NGINX Gateway Fabric's
// RateLimitPolicy) with one namespace and name are two policies: each is compared with the
// status written into its own document, and each finding is located at its own document.
func TestAuditTellsKindsApartByGroup(t *testing.T) {
	docs, err := manifests.Decode("in.yaml", []byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: limits, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}, {group: gateway.networking.k8s.io, kind: Gateway, name: gw}]}
status:
  ancestors:
  - ancestorRef: {name: gw}
    controllerName: gateway.nginx.org/nginx-gateway-controller
    conditions: [{type: Accepted, status: "True", reason: Accepted}]
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: limits, namespace: app}
spec: {targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}, limits: {l: {rates: [{limit: 1, window: 1s}]}}}
status:
  conditions: [{type: Accepted, status: "False", reason: Invalid, message: "not today"}]`))
	require.NoError(t, err)
	s, err := StateOf(docs, kinds.BuiltinKindTable())
	require.NoError(t, err)
	snap, observed := s.SnapshotWithStatuses()
	byGroup := map[string]*impact.ObservedStatus{}
	for _, p := range snap.Policies() {
		byGroup[p.Row.Group] = observed.Of(p)
	}
	assert.Equal(t, map[string]*impact.ObservedStatus{
		"gateway.nginx.org": {Entries: []impact.ObservedEntry{{
			Ancestor:   impact.ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "app", Name: "gw"},
			Controller: "gateway.nginx.org/nginx-gateway-controller",
			Conditions: []kinds.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}},
		}}},
		"kuadrant.io": {Entries: []impact.ObservedEntry{{
			Controller: "kuadrant-operator",
			Conditions: []kinds.Condition{{Type: "Accepted", Status: "False", Reason: "Invalid", Message: "not today"}},
		}}},
	}, byGroup)

	report, err := Audit(docs, kinds.BuiltinKindTable(), nil)
	require.NoError(t, err)
	var located []string
	for _, f := range report.Findings {
		located = append(located, fmt.Sprintf("%s %s/%s: document %d", f.Kind, f.Namespace, f.Name, f.Document))
	}
	assert.Equal(t, []string{"RateLimitPolicy app/limits: document 2"}, located, "the NGINX policy's duplicate target, at its own document")
}
