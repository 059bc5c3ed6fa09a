package clusterstate

import (
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Metrics of the cluster state, registered on controller-runtime's registry.
var (
	liveReadErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_live_read_errors_total",
		Help: "Live reads of the API server that failed or timed out; those reviews were judged on the cache.",
	})
	liveReadDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_live_read_dropped_total",
		Help: "Policies a live read found deleted while the cache still held them; the review was judged again without them.",
	})
	judgesAgain = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_reviews_judged_again_total",
		Help: "Allowed reviews judged a second time before their reservation, because the store changed while they were judged.",
	})
	reservationsUnconfirmed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_reservations_unconfirmed_total",
		Help: "Admitted policies the API server had not stored within the confirmation window (a review that did not come through it, or a write another webhook refused), dropped with their claims.",
	})
	confirmErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_confirm_errors_total",
		Help: "Failed reads of the API server asking whether an admitted policy was stored; it is asked again in the next round.",
	})
	kindDrift = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_kind_drift",
		Help: "Facts of a built-in policy kind's row that the kind's installed CRD widens, by fact (versions, maxTargetRefs, targetKinds, fieldTargetKinds, referenceKinds): the webhook judges by the CRD and warns CRDDrift where a policy relies on one.",
	}, []string{"group", "kind", "fact"})
)

func init() {
	metrics.Registry.MustRegister(liveReadErrors, liveReadDropped, judgesAgain, reservationsUnconfirmed, confirmErrors, kindDrift)
}

// MetricNames lists the store's metric families.
func MetricNames() []string {
	var names []string
	for _, c := range []prometheus.Collector{liveReadErrors, liveReadDropped, judgesAgain, reservationsUnconfirmed, confirmErrors, kindDrift} {
		names = append(names, DescribedNames(c)...)
	}
	return names
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// DescribedNames is the names of the metric families c describes.
func DescribedNames(c prometheus.Collector) []string {
	descs := make(chan *prometheus.Desc, 8)
	go func() { c.Describe(descs); close(descs) }()
	var names []string
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// recordDrift sets the policyattachment_kind_drift series of row's kind: one per fact its
// installed CRD widens, none where it widens nothing (or the kind has no CRD).
func recordDrift(row *kinds.KindRow) {
	kindDrift.DeletePartialMatch(prometheus.Labels{"group": row.Group, "kind": row.Kind})
	if row.Installed == nil {
		return
	}
	for _, d := range row.Installed.Widened() {
		kindDrift.WithLabelValues(row.Group, row.Kind, d.Fact).Inc()
	}
}
