package admission

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// FuzzReview sends arbitrary bodies through the real validating and mutating handlers (the
// guard, metrics, controller-runtime's decoding), with the default settings and with every
// denial relaxed to Warn: every one must get a well-formed AdmissionReview answer and none
// may crash the server.
func FuzzReview(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","namespace":"app","name":"p","kind":{"group":"policies.controller.io","version":"v1","kind":"ColorPolicy"},"object":{"apiVersion":"policies.controller.io/v1","kind":"ColorPolicy","metadata":{"name":"p","namespace":"app"},"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw","namespace":"infra","sectionName":"http"}],"defaults":{"color":"red","strategy":"patch"}}}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"UPDATE","namespace":"app","name":"p","kind":{"group":"kuadrant.io","version":"v1","kind":"RateLimitPolicy"},"object":{"metadata":{"name":"p"},"spec":{"targetRef":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r"},"limits":{"a":{"rates":[{"limit":1,"window":"1s"}]}}}},"oldObject":{"metadata":{"name":"p"},"spec":{}}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"DELETE","namespace":"infra","name":"g","kind":{"group":"gateway.networking.k8s.io","version":"v1beta1","kind":"ReferenceGrant"},"oldObject":{"metadata":{"name":"g","namespace":"infra"},"spec":{"from":[{"group":"policies.controller.io","kind":"ColorPolicy","namespace":"app"}],"to":[{"group":"","kind":"Secret"}]}}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","kind":{"group":"gateway.envoyproxy.io","version":"v1alpha1","kind":"SecurityPolicy"},"object":{"spec":{"targetRefs":"x","basicAuth":{"users":[1,2]},"extAuth":{"http":{"backendRefs":[{"namespace":7}]}}}}}}`,
		`{"request":{"uid":"1","operation":"CREATE","kind":{"group":"kuadrant.io","kind":"TLSPolicy"},"object":{"spec":{"targetRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"},"issuerRef":{"kind":[]}}}}}`,
		`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v2","request":{"uid":"1"}}`,
		`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"1","operation":"CREATE","kind":{"group":"policies.controller.io","version":"v1","kind":"ColorPolicy"},"resource":{"group":"x","resource":"y"},"object":{"apiVersion":"gateway.networking.k8s.io/v1","kind":"BackendTLSPolicy"}}}`,
		`{}`, `[]`, `null`, `{"request":null}`, `{"apiVersion":7}`,
	} {
		f.Add([]byte(seed))
	}
	table := kinds.BuiltinKindTable()
	f.Fuzz(func(t *testing.T, body []byte) {
		// Fresh state per input: what admitted policies pile up to is measured by
		// BenchmarkReview, not left to grow without bound across millions of inputs.
		store := readyStore(table, index.New())
		relaxed := readyStore(table, index.New())
		relaxed.UseConfig(&rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}})
		handlers := []http.Handler{
			reviewHandler("validate", &Validator{Store: store}),
			reviewHandler("mutate", &Mutator{Store: store}),
			reviewHandler("validate", &Validator{Store: relaxed}),
		}
		for _, h := range handlers {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			var review admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
				t.Fatalf("not an AdmissionReview answer (%d): %q", rec.Code, rec.Body.String())
			}
		}
	})
}
