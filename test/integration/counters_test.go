package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// counter reads one of the webhook's unlabelled counters from the registry /metrics serves.
func counter(t *testing.T, name string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// liveReadCounters says, when a review's verdict surprises a test, whether the live reads
// failed, dropped a deleted policy, or the store moved while the review was judged.
func liveReadCounters(t *testing.T) string {
	t.Helper()
	var out []string
	for _, name := range []string{
		"policyattachment_live_read_errors_total",
		"policyattachment_live_read_dropped_total",
		"policyattachment_reviews_judged_again_total",
		"policyattachment_review_timeouts_total",
	} {
		out = append(out, fmt.Sprintf("%s=%g", strings.TrimPrefix(name, "policyattachment_"), counter(t, name)))
	}
	return strings.Join(out, " ")
}
