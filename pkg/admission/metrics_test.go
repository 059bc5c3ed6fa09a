package admission

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// The audit gauges count each finding once per reason and configured mode, and are
// replaced, not added to, by the next audit.
func TestPublishAudit(t *testing.T) {
	store := storeOf(t,
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
