package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Envoy Gateway's CRDs set no maxItems on targetRefs, so its policies are judged whatever
// their length; the mutating door still predicts the impact of at most
// maxPredictedTargetRefs targets.
func TestMutatorPredictsAtMostMaxPredictedTargetRefs(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	policyWith := func(n int) admission.Request {
		refs := make([]string, n)
		for i := range refs {
			refs[i] = fmt.Sprintf(`{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r%d"}`, i)
		}
		return review(t, admissionv1.Create, "gateway.envoyproxy.io", "BackendTrafficPolicy", `{
			"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy", "metadata": {"name": "p", "namespace": "app"},
			"spec": {"targetRefs": [`+strings.Join(refs, ",")+`], "timeout": {"tcp": {"connectTimeout": "5s"}}}}`)
	}
	row, ok := kinds.BuiltinKindTable().Lookup(schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "BackendTrafficPolicy"})
	assert.True(t, ok)
	assert.Greater(t, row.MaxRefs(), maxPredictedTargetRefs, "the CRD sets no limit, so the door's own cap is what bounds the prediction")

	resp := (&Mutator{Store: store}).Handle(context.Background(), policyWith(maxPredictedTargetRefs))
	assert.True(t, resp.Allowed)
	assert.NotEmpty(t, resp.Patches, "predicted up to the cap")

	resp = (&Mutator{Store: store}).Handle(context.Background(), policyWith(maxPredictedTargetRefs+1))
	assert.True(t, resp.Allowed, "the validating webhook judges it; the mutating one only annotates")
	assert.Empty(t, resp.Patches, "no prediction past the cap")
}
