package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// hostileReview is a CREATE review of a ColorPolicy in app, with object as given.
func hostileReview(apiVersion, object string) string {
	return fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": %q, "request": {"uid": "1", "operation": "CREATE",
		"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"},
		"resource": {"group": "policies.controller.io", "version": "v1", "resource": "colorpolicies"},
		"namespace": "app", "name": "p", "object": %s}}`, apiVersion, object)
}

func colorObject(spec string) string {
	return `{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "app"}, "spec": ` + spec + `}`
}

// TestHostileReviews sends what no API server sends through the whole HTTP stack (guard,
// metrics, controller-runtime's decoding, the validator). Each gets a clear answer, never
// "allowed" by accident, in bounded size; none brings the handler down.
func TestHostileReviews(t *testing.T) {
	handler := reviewHandler("validate", &Validator{Store: readyStore(kinds.BuiltinKindTable(), index.New())})
	nested := func(depth int) string {
		return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	}
	refs := make([]string, 10000)
	for i := range refs {
		refs[i] = fmt.Sprintf(`{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r%d"}`, i)
	}
	// Kinds whose CRD sets no maxItems (ColorPolicy's, Envoy Gateway's) are judged whatever
	// their length; the answer names the first MaxDenials-1 problems and counts the rest.
	badRefs := make([]string, 10000)
	for i := range badRefs {
		badRefs[i] = fmt.Sprintf(`{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "R%d"}`, i)
	}
	var badCauses []string
	for i := range MaxDenials - 1 {
		badCauses = append(badCauses, fmt.Sprintf(`spec.targetRefs[%d].name: Invalid value: "R%d": InvalidTargetRef: must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.'), as every object name is`, i, i))
	}
	badCauses = append(badCauses, "spec: Forbidden: InvalidTargetRef: 9991 more problems not shown; `webhook check -f` on the manifest lists them all")
	cases := map[string]struct {
		contentType string
		body        string
		wantAllowed bool
		wantCode    int32
		wantMessage string
	}{
		"body over the size limit": {
			body:     hostileReview("admission.k8s.io/v1", colorObject(`{"color": "`+strings.Repeat("x", MaxReviewBytes)+`"}`)),
			wantCode: http.StatusRequestEntityTooLarge, wantMessage: "request entity is too large; limit is 7340032 bytes",
		},
		"JSON nested deeper than the decoder allows": {
			body:     hostileReview("admission.k8s.io/v1", colorObject(`{"overrides": `+nested(20000)+`}`)),
			wantCode: http.StatusBadRequest, wantMessage: "decoding the AdmissionReview: exceeded max depth within \"/request/object/spec/overrides/a/a/a/a/a/a/a/a/a/…/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a\" after offset 50457",
		},
		"JSON nested 5,000 deep is judged": {
			body:        hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "g"}], "overrides": {"strategy": "patch", "x": `+nested(5000)+`}}`)),
			wantAllowed: true, wantCode: http.StatusOK,
		},
		"wrong content type": {
			contentType: "text/plain", body: hostileReview("admission.k8s.io/v1", colorObject(`{}`)),
			wantCode: http.StatusBadRequest, wantMessage: "contentType=text/plain, expected application/json",
		},
		"AdmissionReview of an unknown version": {
			body:     hostileReview("admission.k8s.io/v2", colorObject(`{}`)),
			wantCode: http.StatusBadRequest, wantMessage: `unsupported AdmissionReview apiVersion "admission.k8s.io/v2"; supported: admission.k8s.io/v1, admission.k8s.io/v1beta1`,
		},
		"AdmissionReview with no request": {
			body:     `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}`,
			wantCode: http.StatusBadRequest, wantMessage: "the AdmissionReview carries no request (uid, kind and operation are required)",
		},
		"object whose kind does not match the review's": {
			body:        hostileReview("admission.k8s.io/v1", `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "p"}, "spec": {}}`),
			wantCode:    http.StatusBadRequest,
			wantMessage: "the object (gateway.networking.k8s.io/v1, kind BackendTLSPolicy) does not match the review's kind ColorPolicy.policies.controller.io and resource colorpolicies.policies.controller.io",
		},
		"non-UTF-8 target name": {
			body:        hostileReview("admission.k8s.io/v1", colorObject("{\"targetRefs\": [{\"group\": \"gateway.networking.k8s.io\", \"kind\": \"Gateway\", \"name\": \"g\xc3\x28\"}], \"color\": \"red\"}")),
			wantCode:    http.StatusUnprocessableEntity,
			wantMessage: `ColorPolicy.policies.controller.io "p" is invalid: spec.targetRefs[0].name: Invalid value: "g` + "\ufffd" + `(": InvalidTargetRef: must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.'), as every object name is`,
		},
		"10,000 targetRefs of a kind whose CRD sets no limit are judged": {
			body:        hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [`+strings.Join(refs, ",")+`], "color": "red"}`)),
			wantAllowed: true, wantCode: http.StatusOK,
		},
		"10,000 malformed targetRefs: the first causes and a count": {
			body:        hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [`+strings.Join(badRefs, ",")+`], "color": "red"}`)),
			wantCode:    http.StatusUnprocessableEntity,
			wantMessage: `ColorPolicy.policies.controller.io "p" is invalid: [` + strings.Join(badCauses, ", ") + "]",
		},
		"a policy naming itself": {
			body:        hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [{"group": "policies.controller.io", "kind": "ColorPolicy", "name": "p"}], "color": "red"}`)),
			wantCode:    http.StatusUnprocessableEntity,
			wantMessage: `ColorPolicy.policies.controller.io "p" is invalid: spec.targetRefs[0].kind: Unsupported value: "policies.controller.io/ColorPolicy": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(tc.body))
			contentType := tc.contentType
			if contentType == "" {
				contentType = "application/json"
			}
			req.Header.Set("Content-Type", contentType)
			handler.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, "the answer is always an AdmissionReview")
			assert.Less(t, rec.Body.Len(), 6144, "the answer stays small (at most MaxDenials causes)")
			var review admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
			require.NotNil(t, review.Response)
			assert.Equal(t, tc.wantAllowed, review.Response.Allowed)
			assert.Equal(t, tc.wantCode, review.Response.Result.Code)
			assert.Equal(t, tc.wantMessage, review.Response.Result.Message)
		})
	}
}

func TestWarningsAreCapped(t *testing.T) {
	warnings := make([]string, 25)
	for i := range warnings {
		warnings[i] = fmt.Sprintf("w%d", i)
	}
	got := capWarnings(warnings)
	require.Len(t, got, MaxWarnings)
	assert.Equal(t, warnings[:MaxWarnings-1], got[:MaxWarnings-1])
	assert.Equal(t, "16 more warnings not shown; `webhook check -f` on the manifest lists them all", got[MaxWarnings-1])
	assert.Equal(t, warnings[:3], capWarnings(warnings[:3]))
}

func TestPanickingHandlerIsRefusedNotAllowed(t *testing.T) {
	handler := reviewHandler("validate", admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		panic("a bug")
	}))
	before := testutil.ToFloat64(handlerPanics.WithLabelValues("validate"))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(hostileReview("admission.k8s.io/v1", colorObject(`{}`))))
	req.Header.Set("Content-Type", "application/json")
	handler.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
	assert.False(t, review.Response.Allowed)
	assert.Equal(t, int32(http.StatusInternalServerError), review.Response.Result.Code)
	assert.Equal(t, "panic: a bug [recovered]", review.Response.Result.Message)
	assert.Equal(t, "1", string(review.Response.UID), "the answer names the request it refuses")
	assert.Equal(t, before+1, testutil.ToFloat64(handlerPanics.WithLabelValues("validate")))
}

func TestV1beta1IsAnsweredInItsVersion(t *testing.T) {
	handler := reviewHandler("validate", &Validator{Store: readyStore(kinds.BuiltinKindTable(), index.New())})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(hostileReview("admission.k8s.io/v1beta1",
		colorObject(`{"targetRefs": [{"group": "", "kind": "Service", "name": "b"}], "color": "red"}`))))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	handler.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
	assert.Equal(t, "admission.k8s.io/v1beta1", review.APIVersion)
	assert.Equal(t, "AdmissionReview", review.Kind)
	assert.False(t, review.Response.Allowed)
	assert.Equal(t, int32(http.StatusUnprocessableEntity), review.Response.Result.Code)
}
