package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// MaxReviewBytes bounds a review body. It is controller-runtime's own limit; reading at most
// this much here keeps a hostile body from costing more than that in memory.
const MaxReviewBytes = 7 << 20

// supportedReviewVersions are the AdmissionReview versions this webhook answers.
var supportedReviewVersions = map[string]bool{"admission.k8s.io/v1": true, "admission.k8s.io/v1beta1": true}

// reviewHandler is the HTTP handler of one webhook path: the body guard, then metrics,
// then controller-runtime's decoding and h.
func reviewHandler(name string, h admission.Handler) http.Handler {
	return guardReview(instrument(name, &webhook.Admission{Handler: h}))
}

// guardReview refuses, before decoding, what controller-runtime would pass on: a body over
// the limit is cut off, and an AdmissionReview of a version this webhook does not speak is
// refused instead of being answered as if it were v1.
func guardReview(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxReviewBytes+1))
		if err != nil {
			writeReviewError(w, http.StatusBadRequest, fmt.Sprintf("reading the review: %v", err))
			return
		}
		if len(body) > MaxReviewBytes {
			writeReviewError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request entity is too large; limit is %d bytes", MaxReviewBytes))
			return
		}
		if v, ok := reviewVersion(body); ok && !supportedReviewVersions[v] {
			writeReviewError(w, http.StatusBadRequest, fmt.Sprintf("unsupported AdmissionReview apiVersion %q; supported: admission.k8s.io/v1, admission.k8s.io/v1beta1", v))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// reviewVersion reads the top-level apiVersion of a review without decoding the rest: the
// API server writes it second, after kind, so this usually stops after a few bytes.
func reviewVersion(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false // not an object: controller-runtime reports the parse error
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", false
		}
		if key == "apiVersion" {
			var v string
			if err := dec.Decode(&v); err != nil {
				return "", false
			}
			return v, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// writeReviewError answers with an AdmissionReview refusing the request, as controller-runtime
// does for a body it cannot decode.
func writeReviewError(w http.ResponseWriter, code int, message string) {
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Response: &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
			Status: metav1.StatusFailure, Code: int32(code), Message: message,
		}},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review) // the client went away; nothing left to tell it
}
