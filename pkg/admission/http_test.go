package admission

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// TestMalformedReviews sends bad bodies through the real HTTP handler: each gets a clear
// answer, and none brings the handler down.
func TestMalformedReviews(t *testing.T) {
	handler := reviewHandler("validate", &Validator{Store: readyStore(kinds.BuiltinKindTable(), index.New())})
	cases := map[string]struct {
		contentType, body string
		wantHTTP          int
		wantCode          int32
		wantMessage       string
	}{
		"not JSON": {
			contentType: "application/json", body: "{not json", wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: "decoding the AdmissionReview: invalid character 'o' in literal null (expecting 'u') after offset 2",
		},
		"a name given twice in one object": {
			// Which copy counts would be a guess, and the API server might guess otherwise.
			contentType: "application/json",
			body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "1", "operation": "CREATE",
				"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"}, "namespace": "app", "name": "p",
				"object": {"metadata": {"name": "p", "name": "q"}}}}`,
			wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: `decoding the AdmissionReview: duplicate object member name "name" within "/request/object/metadata"`,
		},
		"wrong content type": {
			contentType: "text/plain", body: "{}", wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: "contentType=text/plain, expected application/json",
		},
		"a review without a request": {
			contentType: "application/json", body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}`,
			wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest, wantMessage: "the AdmissionReview carries no request (uid, kind and operation are required)",
		},
		"a policy whose object is not a JSON object": {
			contentType: "application/json",
			body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "1", "operation": "CREATE",
				"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"}, "namespace": "app", "name": "p",
				"object": "a string"}}`,
			wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: "decoding the AdmissionReview: request.object must be a JSON object, not a string",
		},
		"a review whose uid is a number": {
			contentType: "application/json",
			body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 7, "operation": "CREATE",
				"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"}, "namespace": "app", "name": "p"}}`,
			wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: "decoding the AdmissionReview: request.uid must be a JSON string, not a number",
		},
		"a policy whose metadata is a list": {
			contentType: "application/json",
			body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "1", "operation": "CREATE",
				"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"}, "namespace": "app", "name": "p",
				"object": {"metadata": []}}}`,
			wantHTTP: http.StatusOK, wantCode: http.StatusBadRequest,
			wantMessage: "decoding the AdmissionReview: request.object.metadata must be a JSON object, not an array",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			handler.ServeHTTP(rec, req)
			require.Equal(t, tc.wantHTTP, rec.Code, rec.Body.String())
			if tc.wantCode == 0 {
				return
			}
			var review admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
			require.NotNil(t, review.Response)
			assert.False(t, review.Response.Allowed)
			assert.Equal(t, tc.wantCode, review.Response.Result.Code)
			assert.Equal(t, tc.wantMessage, review.Response.Result.Message)
		})
	}
}

func TestReadyzWaitsForSync(t *testing.T) {
	store := clusterstate.NewStore(kinds.BuiltinKindTable(), index.New())
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		readyz(store).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	code, body := get()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not every kind the rules read has been listed yet\n", body)
	store.SetReady()
	code, body = get()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
}

// The object of a review reaches the handlers as generic JSON with every ObjectMeta field,
// null and absent fields left out alike, and without what no handler reads.
func TestReviewObjectKeepsWhatHandlersRead(t *testing.T) {
	type review struct {
		Object *reviewObject `json:"object"`
	}
	var in review
	require.NoError(t, json.Unmarshal([]byte(`{"object": {
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "generateName": "p-", "namespace": "app", "selfLink": "/x", "uid": "u-1",
			"resourceVersion": "42", "generation": 3, "creationTimestamp": "2026-11-01T09:30:00Z",
			"deletionTimestamp": "2026-11-02T09:30:00Z", "deletionGracePeriodSeconds": 30,
			"labels": {"team": "a"}, "annotations": {"note": "x"}, "ownerReferences": [{"name": "o"}], "finalizers": ["f"],
			"managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
		"spec": {"color": "red"},
		"status": {"conditions": [{"type": "Accepted"}]}}}`), &in))
	assert.Equal(t, map[string]any{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": map[string]any{"name": "p", "generateName": "p-", "namespace": "app", "selfLink": "/x", "uid": "u-1",
			"resourceVersion": "42", "generation": float64(3), "creationTimestamp": "2026-11-01T09:30:00Z",
			"deletionTimestamp": "2026-11-02T09:30:00Z", "deletionGracePeriodSeconds": float64(30),
			"labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "x"},
			"ownerReferences": []any{map[string]any{"name": "o"}}, "finalizers": []any{"f"}},
		"spec": map[string]any{"color": "red"},
	}, in.Object.generic())

	in = review{}
	require.NoError(t, json.Unmarshal([]byte(`{"object": {"kind": "ColorPolicy", "metadata": {"name": "p", "annotations": null}, "spec": null}}`), &in))
	assert.Equal(t, map[string]any{"kind": "ColorPolicy", "metadata": map[string]any{"name": "p"}}, in.Object.generic())

	in = review{}
	require.NoError(t, json.Unmarshal([]byte(`{"object": {"kind": "ColorPolicy"}}`), &in))
	assert.Equal(t, map[string]any{"kind": "ColorPolicy"}, in.Object.generic(), "no metadata: none made up")
}

// While the process shuts down, every answer closes its connection, so the API server does
// not reuse one that is about to be closed under it.
func TestDrainingClosesConnections(t *testing.T) {
	store := clusterstate.NewStore(kinds.BuiltinKindTable(), index.New())
	h := closeWhenDraining(store, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	serve := func() *http.Response {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PathValidate, nil))
		return rec.Result()
	}
	assert.Empty(t, serve().Header.Get("Connection"), "serving: keep-alive")
	store.SetDraining()
	assert.Equal(t, "close", serve().Header.Get("Connection"))
}
