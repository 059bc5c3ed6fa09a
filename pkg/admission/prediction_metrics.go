package admission

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// Metrics of the comparison of what controllers wrote into the stored policies' status with
// the prediction (docs/status-comparison.md), set by the periodic audit.
var (
	predictionDisagreements = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_prediction_disagreements",
		Help: "Status entries (an ancestor, a GEP-5058 target, or a policy's own conditions) where the last audit found the controller's status and the prediction part ways, by policy kind and class (refusedByController, deniedByWebhook, statusDiffers).",
	}, []string{"kind", "class"})
	predictionCompared = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "policyattachment_prediction_statuses_compared",
		Help: "Status entries the last audit compared with the prediction, by policy kind (stale entries, and conditions the kind's row does not read, are not compared).",
	}, []string{"kind"})
)

// predictionComparer is the store's side of the comparison (clusterstate.Store).
type predictionComparer interface {
	ComparePredictions(findings []impact.Finding) (compared map[string]int, out []impact.Disagreement)
}

// publishPredictions compares the stored policies' statuses with the predictions, findings
// being the audit's, replaces the gauges with the result (every kind compared has a series
// for each class, 0 where none disagrees, so an alert on a class sees it clear), and logs
// the first disagreements.
func publishPredictions(store predictionComparer, findings []impact.Finding, log logr.Logger) {
	compared, disagreements := store.ComparePredictions(findings)
	setPredictionGauges(compared, disagreements)
	if len(disagreements) == 0 {
		return
	}
	total := 0
	for _, n := range compared {
		total += n
	}
	first := make([]string, 0, maxLoggedFindings)
	for _, d := range disagreements[:min(len(disagreements), maxLoggedFindings)] {
		first = append(first, d.Policy.Row.Kind+" "+d.Policy.Ref()+" "+d.Class+": "+d.Where())
	}
	log.Info("audit: controllers' statuses disagree with the prediction; run `webhook audit` for both sides",
		"compared", total, "disagreements", len(disagreements), "first", first)
}

func setPredictionGauges(compared map[string]int, disagreements []impact.Disagreement) {
	predictionDisagreements.Reset()
	predictionCompared.Reset()
	for kind, n := range compared {
		predictionCompared.WithLabelValues(kind).Set(float64(n))
		for _, class := range impact.DisagreementClasses {
			predictionDisagreements.WithLabelValues(kind, class).Set(0)
		}
	}
	for _, d := range disagreements {
		predictionDisagreements.WithLabelValues(d.Policy.Row.Kind, d.Class).Inc()
	}
}

func init() {
	metrics.Registry.MustRegister(predictionDisagreements, predictionCompared)
}
