package admission

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/rules"
)

// Mutator adds the predicted impact annotations to policies on CREATE and UPDATE. Its
// patch touches only those two annotations, and the same object against the same state
// always gets the same patch (reinvocation-safe).
type Mutator struct {
	Store *Store
}

var _ admission.Handler = (*Mutator)(nil)

// Handle implements controller-runtime's admission.Handler.
func (m *Mutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if err := checkRequest(req); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	row, ok := m.Store.Row(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind})
	if !ok {
		return admission.Allowed("")
	}
	rreq, err := decodeRequest(row, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	im := m.Store.Predict(rreq.Policy)
	value, err := json.Marshal(im)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	mutated, err := withAnnotations(req.Object.Raw, map[string]string{
		rules.AnnotationImpact:        string(value),
		rules.AnnotationImpactSummary: im.Summary(rreq.Policy),
	})
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, mutated)
	// The diff iterates maps; sorted operations make the answer byte-for-byte stable.
	sort.Slice(resp.Patches, func(i, j int) bool { return resp.Patches[i].Path < resp.Patches[j].Path })
	return resp
}

// withAnnotations returns the object with the annotations set, and nothing else changed.
func withAnnotations(raw []byte, set map[string]string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	for k, v := range set {
		annotations[k] = v
	}
	return json.Marshal(obj)
}
