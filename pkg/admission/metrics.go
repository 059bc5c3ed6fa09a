package admission

import (
	"cmp"
	"crypto/tls"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Metrics of the admission door, registered on controller-runtime's registry.
var (
	reviewsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policyattachment_reviews_total",
		Help: "Admission reviews answered, by webhook, verdict (allowed|denied|errored), reason, the object's API group and kind, its namespace (empty unless --metrics-namespace-label), the operation, and whether it was a dry run.",
	}, []string{"webhook", "verdict", "reason", "group", "kind", "namespace", "operation", "dry_run"})
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_build_info",
		Help: "Always 1; the labels say which build is running.",
	}, []string{"version", "go_version"})
	reviewSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "policyattachment_review_duration_seconds",
		Help: "Time to answer one admission review, from decoded request to response.",
		// Fine enough for sub-millisecond answers: 25µs .. 250ms.
		Buckets: []float64{0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25},
	}, []string{"webhook"})
	reviewsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_reviews_in_flight",
		Help: "Admission reviews being answered now.",
	})
	relaxedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policyattachment_relaxed_denials_total",
		Help: "Denials admitted by their enforcement mode (Warn or DryRun), by reason and kind.",
	}, []string{"mode", "reason", "kind"})
	auditFindings = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_audit_findings",
		Help: "Stored policies the last audit found the rules would deny today, by kind, reason and configured mode.",
	}, []string{"kind", "reason", "mode"})
	auditPolicies = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_audit_policies",
		Help: "Stored policies the last audit judged.",
	})
	auditDuration = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_audit_duration_seconds",
		Help: "How long the last audit took.",
	})
	auditLastRun = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_audit_last_run_timestamp_seconds",
		Help: "When the last audit finished (Unix time).",
	})
	reviewTimeouts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_review_timeouts_total",
		Help: "Reviews refused because they did not finish within --review-timeout.",
	})
	handlerPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policyattachment_handler_panics_total",
		Help: "Reviews whose handler panicked; each was refused with code 500.",
	}, []string{"webhook"})
	reservationsExpired = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "policyattachment_reservations_expired_total",
		Help: "Admitted policies whose watch event never came (another webhook or the API server rejected the write).",
	})
)

// namespaceLabel says whether policyattachment_reviews_total names the namespace of what was
// reviewed (Options.MetricsNamespaceLabel). Off, the label is empty: a namespace's name is a
// name, and metrics carry none. Process-wide, as the registry the counter lives in is.
var namespaceLabel atomic.Bool

// reviewedNamespace is the value of the reviews counter's namespace label for a review of
// an object in namespace ns.
func reviewedNamespace(ns string) string {
	if namespaceLabel.Load() {
		return ns
	}
	return ""
}

// metricsOptions configures controller-runtime's metrics server as kubebuilder projects
// ship it: HTTPS (the serving certificate of opts.CertDir, reloaded when it changes; a
// self-signed one when the folder holds none) with opts' TLS version and HTTP/2 settings,
// and every request authenticated by the API server (a TokenReview of its bearer token) and
// authorized by it (a SubjectAccessReview: get on the non-resource URL /metrics, which the
// ClusterRole policyattachment-metrics-reader grants): 401 without a token, 500 for a token
// the API server rejects (controller-runtime's answer), 403 without the permission. Plain
// HTTP, open to whoever reaches the port, only with opts.InsecureMetrics.
func metricsOptions(opts *Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: orOff(opts.MetricsAddress)}
	if opts.InsecureMetrics {
		return o
	}
	minVersion, http2 := cmp.Or(opts.TLSMinVersion, tls.VersionTLS13), opts.EnableHTTP2
	o.SecureServing = true
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	o.CertDir = opts.CertDir
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
		c.MinVersion = minVersion
		if !http2 {
			c.NextProtos = []string{"http/1.1"} // CVE-2023-44487, as on the review port
		}
	}}
	return o
}

// PublishBuildInfo sets policyattachment_build_info for this build.
func PublishBuildInfo(version string) {
	buildInfo.Reset()
	buildInfo.WithLabelValues(version, runtime.Version()).Set(1)
}

// publishAudit replaces the audit gauges with one audit's results. A policy counts once per
// reason it would be denied for.
func publishAudit(findings []impact.Finding, audited int, took time.Duration) {
	type series struct{ kind, reason, mode string }
	counts := map[series]int{}
	for _, f := range findings {
		seen := map[series]bool{}
		for i, e := range f.Denials {
			k := series{f.Policy.Row.Kind, validation.ReasonOf(e), string(f.Modes[i])}
			if !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
	}
	auditFindings.Reset()
	for k, n := range counts {
		auditFindings.WithLabelValues(k.kind, k.reason, k.mode).Set(float64(n))
	}
	auditPolicies.Set(float64(audited))
	auditDuration.Set(took.Seconds())
	auditLastRun.Set(float64(time.Now().Unix()))
}

func init() {
	metrics.Registry.MustRegister(reviewsTotal, reviewSeconds, reviewsInFlight, reservationsExpired, relaxedTotal, reviewTimeouts, handlerPanics,
		auditFindings, auditPolicies, auditDuration, auditLastRun, buildInfo)
}
