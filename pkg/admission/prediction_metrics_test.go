package admission

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// The periodic audit compares what the controllers wrote into the stored policies' status
// (kept from the watch events) with the prediction and publishes the disagreements by kind
// and class, every class of a kind compared present (0 when none disagrees), and logs them;
// a policy deleted takes its status with it.
func TestPublishPredictions(t *testing.T) {
	const gateway = `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "gw", "namespace": "app"},
		"spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}`
	const route = `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r", "namespace": "app"},
		"spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "b1", "port": 443}, {"name": "b2", "port": 443}]}]}}`
	status := func(accepted, reason string) string {
		return `"status": {"ancestors": [{"ancestorRef": {"name": "gw"}, "controllerName": "example.com/gateway-controller",
			"conditions": [{"type": "Accepted", "status": "` + accepted + `", "reason": "` + reason + `"}]}]}`
	}
	policy := func(name, service, created, status string) string {
		return `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": {"name": "` + name + `", "namespace": "app", "creationTimestamp": "` + created + `"},
			"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "` + service + `", "sectionName": "https"}],
			         "validation": {"hostname": "` + name + `.app", "wellKnownCACertificates": "System"}}, ` + status + `}`
	}
	store := storeOf(t, gateway, route,
		`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b1", "namespace": "app"}, "spec": {"ports": [{"name": "https", "port": 443}]}}`,
		`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b2", "namespace": "app"}, "spec": {"ports": [{"name": "https", "port": 443}]}}`,
		policy("old", "b1", "2024-01-01T00:00:00Z", status("True", "Accepted")),
		// A controller that accepted the younger of two on one port: the rules deny it.
		policy("late", "b1", "2024-02-01T00:00:00Z", status("True", "Accepted")),
		// A controller that refused what the rules admit.
		policy("refused", "b2", "2024-01-01T00:00:00Z", status("False", "NoValidCACertificate")))
	findings, _ := store.Audit()
	require.Len(t, findings, 1)

	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	publishPredictions(store, findings, log)
	series := func(class string) float64 {
		return testutil.ToFloat64(predictionDisagreements.WithLabelValues("BackendTLSPolicy", class))
	}
	assert.Equal(t, 1.0, series(impact.ClassDeniedByWebhook))
	assert.Equal(t, 1.0, series(impact.ClassRefusedByController))
	assert.Equal(t, 0.0, series(impact.ClassStatusDiffers))
	assert.Equal(t, 3.0, testutil.ToFloat64(predictionCompared.WithLabelValues("BackendTLSPolicy")))
	require.Len(t, logged, 1)
	assert.Equal(t, `"level"=0 "msg"="audit: controllers' statuses disagree with the prediction; run `+"`webhook audit`"+` for both sides" `+
		`"compared"=3 "disagreements"=2 "first"=["BackendTLSPolicy app/late deniedByWebhook: Gateway app/gw" `+
		`"BackendTLSPolicy app/refused refusedByController: Gateway app/gw"]`, logged[0])

	store.Remove(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "refused")
	store.Remove(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "late")
	findings, _ = store.Audit()
	logged = nil
	publishPredictions(store, findings, log)
	assert.Equal(t, 0.0, series(impact.ClassDeniedByWebhook))
	assert.Equal(t, 0.0, series(impact.ClassRefusedByController))
	assert.Equal(t, 1.0, testutil.ToFloat64(predictionCompared.WithLabelValues("BackendTLSPolicy")))
	assert.Empty(t, logged, "nothing disagrees: nothing logged")
}
