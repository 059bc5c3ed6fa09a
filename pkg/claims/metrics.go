package claims

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of claims, registered on controller-runtime's registry.
var (
	claimsTaken = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_taken_total",
		Help: "Conflict keys claimed (a Lease each) before judging a policy write.",
	})
	claimsWaited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_waited_total",
		Help: "Reviews that waited for a claim another policy held at the same attachment point.",
	})
	claimsTakenOver = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_taken_over_total",
		Help: "Claims taken over after they expired unreleased (the replica holding them died).",
	})
	claimsReleased = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_released_total",
		Help: "Claims given back once their policy was stored or not admitted.",
	})
	claimReleaseErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claim_release_errors_total",
		Help: "Claims that could not be given back; each expires after its duration.",
	})
)

var collectors = []prometheus.Collector{claimsTaken, claimsWaited, claimsTakenOver, claimsReleased, claimReleaseErrors}

func init() { metrics.Registry.MustRegister(collectors...) }

// Collectors are the package's metrics (for the list of names the webhook exports).
func Collectors() []prometheus.Collector { return collectors }
