package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Mutator adds the predicted impact annotations to policies on CREATE and UPDATE. Its
// patch touches only those two annotations, and the same object against the same state
// always gets the same patch (reinvocation-safe).
type Mutator struct {
	Store *clusterstate.Store
}

var _ admission.Handler = (*Mutator)(nil)

// maxPredictedTargetRefs bounds the mutating door's work on its own: a policy of a kind whose
// CRD sets no maxItems (Envoy Gateway's) may name any number of targets, and the validating
// door judges them all, but its impact is predicted only up to this many (16 times the
// Gateway API's usual maxItems; no implementation's example comes near it).
const maxPredictedTargetRefs = 256

// Handle implements controller-runtime's admission.Handler.
func (m *Mutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if err := checkRequest(req); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	row, ok := m.Store.Row(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind})
	if !ok || !m.Store.Ready() {
		// Unknown kinds are untouched; before the caches sync a prediction would be wrong,
		// so the policy goes unannotated, as when the mutating webhook is unreachable.
		return admission.Allowed("")
	}
	obj, err := objectOf(req.Object)
	if err != nil || obj == nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding %s %s/%s: %v", row.Kind, req.Namespace, req.Name, err))
	}
	p := policy.NewPolicy(row, obj)
	if p.Namespace == "" && row.Scope == kinds.Namespaced {
		p.Namespace = req.Namespace
	}
	if p.TooManyTargetRefs() || len(p.TargetRefs) > maxPredictedTargetRefs {
		// More than the kind's CRD allows: the validating webhook denies it (the CRD's
		// maxItems usually refuses it first, but mutation runs before the schema is checked).
		// More than maxPredictedTargetRefs of a kind whose CRD sets no limit: admitted, but
		// unannotated. Either way, predicting the impact of every one of its targets would
		// cost memory and time in proportion to what a tenant chose to send.
		return admission.Allowed("")
	}
	im, summary := m.Store.Predict(p)
	value, err := json.Marshal(im)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Patched("", annotationPatch(obj, map[string]string{
		impact.AnnotationImpact:        string(value),
		impact.AnnotationImpactSummary: summary,
	})...)
}

// annotationPatch adds (or replaces: JSON Patch "add" on an existing member replaces it)
// exactly the given annotations, in sorted order, so the same object and state always
// give the same patch. It is built directly rather than by diffing two encodings of the
// whole object.
func annotationPatch(obj map[string]any, set map[string]string) []jsonpatch.JsonPatchOperation {
	meta, _ := obj["metadata"].(map[string]any)
	if _, ok := meta["annotations"].(map[string]any); !ok {
		all := make(map[string]any, len(set))
		for k, v := range set {
			all[k] = v
		}
		if meta == nil {
			return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/metadata", Value: map[string]any{"annotations": all}}}
		}
		return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/metadata/annotations", Value: all}}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ops := make([]jsonpatch.JsonPatchOperation, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, jsonpatch.JsonPatchOperation{Operation: "add", Path: "/metadata/annotations/" + escapePointer(k), Value: set[k]})
	}
	return ops
}

// escapePointer escapes one JSON Pointer token (RFC 6901).
func escapePointer(s string) string { return pointerEscaper.Replace(s) }

// pointerEscaper is built once: building a Replacer costs kilobytes, and a patch escapes
// every annotation key of the object (a third of what a mutating review allocated when the
// object carried kubectl's last-applied annotation). A Replacer is safe for concurrent use.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
