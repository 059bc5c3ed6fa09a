package admission

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// The audit gauges count each finding once per reason and configured mode, and are
// replaced, not added to, by the next audit.
func TestPublishAudit(t *testing.T) {
	store := storeOf(t,
		`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b1", "namespace": "app"}, "spec": {"ports": [{"name": "https", "port": 443}]}}`,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "old", "namespace": "app", "creationTimestamp": "2024-01-01T00:00:00Z"},
		  "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}], "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "late", "namespace": "app", "creationTimestamp": "2024-02-01T00:00:00Z"},
		  "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}], "validation": {"hostname": "other", "wellKnownCACertificates": "System"}}}`)
	store.UseConfig(&rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}})
	findings, audited := store.Audit()
	require.Len(t, findings, 1)

	publishAudit(findings, audited, time.Millisecond)
	assert.Equal(t, 1.0, testutil.ToFloat64(auditFindings.WithLabelValues("BackendTLSPolicy", validation.ReasonConflicted, "Warn")))
	assert.Equal(t, 2.0, testutil.ToFloat64(auditPolicies))

	publishAudit(nil, 2, time.Millisecond)
	assert.Equal(t, 0, testutil.CollectAndCount(auditFindings), "a clean audit leaves no finding series")
}

// The reviews counter takes a denial's reason from the verdict, not from the text it
// renders: the first denial's stable reason, which the response carries as an audit
// annotation. It says what was reviewed (group, kind, operation, dry run), never a name or
// a user; not even the namespace's name by default (TestReviewsCounterNamespaceLabel).
func TestReviewsCounterLabelsTheFirstReason(t *testing.T) {
	h := instrument("validate", validator(index.New()))
	counter := reviewsTotal.WithLabelValues("validate", "denied", validation.ReasonInvalidTargetRef, kinds.GatewayGroup, "BackendTLSPolicy", "", "CREATE", "false")
	dryRuns := reviewsTotal.WithLabelValues("validate", "denied", validation.ReasonInvalidTargetRef, kinds.GatewayGroup, "BackendTLSPolicy", "", "CREATE", "true")
	before, beforeDry := testutil.ToFloat64(counter), testutil.ToFloat64(dryRuns)
	req := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", `{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "B1"}], "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`)
	resp := h.Handle(context.Background(), req)
	assert.False(t, resp.Allowed)
	assert.Equal(t, map[string]string{AuditReason: validation.ReasonInvalidTargetRef}, resp.AuditAnnotations)
	assert.Equal(t, before+1, testutil.ToFloat64(counter))

	dry := true
	req.DryRun = &dry
	h.Handle(context.Background(), req)
	assert.Equal(t, beforeDry+1, testutil.ToFloat64(dryRuns))
	assert.Equal(t, before+1, testutil.ToFloat64(counter))
}

// TestReviewsCounterNamespaceLabel: the namespace label of the reviews counter is empty
// unless `--metrics-namespace-label` (Options.MetricsNamespaceLabel) asks for the namespace
// of what was reviewed; a namespace's name is a name, and by default the metrics carry none.
func TestReviewsCounterNamespaceLabel(t *testing.T) {
	t.Cleanup(func() { namespaceLabel.Store(false) })
	req := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", `{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "p", "namespace": "tenant-secret-project"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}], "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`)
	req.Namespace = "tenant-secret-project"
	series := func(ns string) float64 {
		return testutil.ToFloat64(reviewsTotal.WithLabelValues("validate", "allowed", "", kinds.GatewayGroup, "BackendTLSPolicy", ns, "CREATE", "false"))
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		label string
	}{
		{"by default", Options{}, ""},
		{"with --metrics-namespace-label", Options{MetricsNamespaceLabel: true}, "tenant-secret-project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The door sets it from its options, as `webhook serve` builds it.
			NewStaticServer(index.New(), Options{Table: kinds.BuiltinKindTable(), MetricsNamespaceLabel: tc.opts.MetricsNamespaceLabel})
			empty, named := series(""), series("tenant-secret-project")
			resp := instrument("validate", validator(index.New())).Handle(context.Background(), req)
			require.True(t, resp.Allowed, "%+v", resp.Result)
			if tc.label == "" {
				assert.Equal(t, empty+1, series(""))
				assert.Equal(t, named, series("tenant-secret-project"), "no series names the namespace")
			} else {
				assert.Equal(t, named+1, series("tenant-secret-project"))
				assert.Equal(t, empty, series(""))
			}
		})
	}
}

func TestBuildInfo(t *testing.T) {
	PublishBuildInfo("v1.2.3")
	assert.Equal(t, 1.0, testutil.ToFloat64(buildInfo.WithLabelValues("v1.2.3", runtime.Version())))
	assert.Equal(t, 1, testutil.CollectAndCount(buildInfo))
}
