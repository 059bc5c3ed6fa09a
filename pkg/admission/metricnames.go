package admission

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/policyattachment/webhook/pkg/claims"
	"github.com/policyattachment/webhook/pkg/clusterstate"
)

// MetricNames lists the metric families `webhook serve` exports of its own (those of the
// admission door and of the store), sorted: the shipped alerts and dashboard may name only
// these (test/deploy).
func MetricNames() []string {
	names := clusterstate.MetricNames()
	for _, c := range []prometheus.Collector{reviewsTotal, buildInfo, reviewSeconds, reviewsInFlight, relaxedTotal,
		auditFindings, auditPolicies, auditDuration, auditLastRun, reviewTimeouts, handlerPanics, reservationsExpired,
		reviewMemoryInFlight, reviewsRefused} {
		names = append(names, clusterstate.DescribedNames(c)...)
	}
	for _, c := range claims.Collectors() {
		names = append(names, clusterstate.DescribedNames(c)...)
	}
	sort.Strings(names)
	return names
}
