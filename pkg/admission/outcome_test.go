package admission

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// The reviews counter takes a denial's reason from the verdict, not from the text it
// renders: the label is the first denial's stable reason.
func TestReviewsCounterLabelsTheFirstReason(t *testing.T) {
	h := instrument("validate", validator(index.New()))
	counter := reviewsTotal.WithLabelValues("validate", "denied", validation.ReasonInvalidTargetRef)
	before := testutil.ToFloat64(counter)
	resp := h.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", `{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Gateway", "name": "b1"}], "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`))
	assert.False(t, resp.Allowed)
	assert.Equal(t, before+1, testutil.ToFloat64(counter))
}
