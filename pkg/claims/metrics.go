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
		Help: "Claims that could not be given back; each expires after its duration, and the sweep ends it.",
	})
	claimsHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_claims_held",
		Help: "Claims this replica holds now: taken for a review and not given back yet (until the policy is stored, refused, or found not stored after --confirm-window).",
	})
	claimsTakenLate = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_taken_late_total",
		Help: "Claims a Lease write took after its review was over (its deadline passed, or its caller hung up, while the write was in flight), given back at once.",
	})
	claimsAbandoned = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claims_abandoned_total",
		Help: "Claims the sweep found still held past their duration (their replica died mid-review, or lost a write's answer) and deleted, or released when their policy is stored.",
	})
	claimSweepErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_claim_sweep_errors_total",
		Help: "Requests of the claims' sweep that failed (a list, a read of a claim's policy, a delete or update); the next sweep tries again.",
	})
	claimLeases = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_claim_leases",
		Help: "Claim Leases in the webhook's namespace after this replica's last sweep, by state: held (a review holds it) or released (kept for a minute after an admission).",
	}, []string{"state"})
)

var collectors = []prometheus.Collector{claimsTaken, claimsWaited, claimsTakenOver, claimsReleased, claimReleaseErrors,
	claimsHeld, claimsTakenLate, claimsAbandoned, claimSweepErrors, claimLeases}

func init() { metrics.Registry.MustRegister(collectors...) }

// Collectors are the package's metrics (for the list of names the webhook exports).
func Collectors() []prometheus.Collector { return collectors }
