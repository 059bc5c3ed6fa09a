package admission

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// colorReview is the body of a CREATE review of a ColorPolicy, as the API server sends it.
func colorReview(namespace, name string, dryRun bool, spec string) string {
	return fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "1", "operation": "CREATE",
		"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"},
		"resource": {"group": "policies.controller.io", "version": "v1", "resource": "colorpolicies"},
		"namespace": %q, "name": %q, "dryRun": %v,
		"object": {"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": %q, "namespace": %q}, "spec": %s}}}`,
		namespace, name, dryRun, name, namespace, spec)
}

// throughTheDoor posts a review body to handler and returns the raw answer and the review.
func throughTheDoor(t *testing.T, handler http.Handler, path, body string) (string, *admissionv1.AdmissionResponse) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	handler.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
	require.NotNil(t, review.Response)
	return rec.Body.String(), review.Response
}

// Two integers one float64 cannot tell apart (it is nearest to ...992 for both) are two
// values whichever side holds which: a policy stored as the cluster feeds read it, kept as
// compact JSON, and a policy in a review, read by the door. The denial quotes both as
// written.
func TestExactIntegersThroughTheDoor(t *testing.T) {
	table := kinds.BuiltinKindTable()
	row := rulestest.MustRow(t, table, "policies.controller.io", "ColorPolicy")
	spec := func(rps string) string {
		return `{"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "overrides": {"strategy": "patch", "limits": {"rps": ` + rps + `}}}`
	}
	for _, tc := range []struct{ stored, reviewed string }{
		{"9007199254740993", "9007199254740992"},
		{"9007199254740992", "9007199254740993"},
	} {
		t.Run("stored "+tc.stored, func(t *testing.T) {
			snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}`)
			stored, err := runtime.Decode(unstructured.UnstructuredJSONScheme, []byte(`{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
				"metadata": {"name": "first", "namespace": "app", "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": `+spec(tc.stored)+`}`))
			require.NoError(t, err)
			snap.PutPolicy(policy.NewPolicy(row, stored.(*unstructured.Unstructured).Object))
			handler := reviewHandler("validate", &Validator{Store: readyStore(table, snap)})

			_, resp := throughTheDoor(t, handler, "/validate", colorReview("app", "second", false, spec(tc.reviewed)))
			assert.False(t, resp.Allowed)
			assert.Equal(t, `ColorPolicy.policies.controller.io "second" is invalid: spec.overrides.limits.rps: Forbidden: Conflicted: ColorPolicy app/first on Gateway app/gw also sets overrides "limits.rps" to `+tc.stored+` (this policy: `+tc.reviewed+`); `+rulestest.OrderDetail,
				resp.Result.Message)
		})
	}
}

// A tenant's dry runs of limits.rps 1 to 200 against another namespace's stored 137, through
// the HTTPS door: 200 identical answers, byte for byte.
func TestNoValueOracleThroughTheDoor(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.SharedGatewayWorld, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: limits, namespace: web, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {strategy: patch, limits: {rps: 137}}`)
	handler := reviewHandler("validate", &Validator{Store: readyStore(table, snap)})
	probe := func(rps int) string {
		return colorReview("app", "probe", true, fmt.Sprintf(
			`{"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "infra"}], "overrides": {"strategy": "patch", "limits": {"rps": %d}}}`, rps))
	}
	first, resp := throughTheDoor(t, handler, "/validate", probe(1))
	assert.False(t, resp.Allowed)
	assert.Equal(t, `ColorPolicy.policies.controller.io "probe" is invalid: spec.overrides.limits.rps: Forbidden: Conflicted: a ColorPolicy in namespace "web" on Gateway infra/gw also sets overrides "limits.rps"; `+validation.AcrossNamespacesDetail,
		resp.Result.Message)
	assert.Empty(t, resp.Warnings)
	for rps := 2; rps <= 200; rps++ {
		answer, _ := throughTheDoor(t, handler, "/validate", probe(rps))
		require.Equal(t, first, answer, "guess %d", rps)
	}
}

// A megabyte targetRef name: the denial and the warning name it by its first 64 bytes and
// its length, and the answers of both webhooks stay small.
func TestEchoesAreBounded(t *testing.T) {
	table := kinds.BuiltinKindTable()
	store := readyStore(table, index.New())
	name := strings.Repeat("a", 1<<20)
	body := colorReview("app", "p", false, `{"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "`+name+`"}], "color": "red"}`)
	shown := "HTTPRoute app/" + strings.Repeat("a", 64) + "... (1048576 bytes)"

	answer, resp := throughTheDoor(t, reviewHandler("validate", &Validator{Store: store}), "/validate", body)
	assert.Less(t, len(answer), 2048)
	assert.False(t, resp.Allowed)
	assert.Equal(t, `ColorPolicy.policies.controller.io "p" is invalid: spec.targetRefs[0].name: Too long: InvalidTargetRef: may not be more than 253 bytes`, resp.Result.Message)
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[0]: " + shown + " not found; the policy takes effect once it exists"}, resp.Warnings)

	answer, resp = throughTheDoor(t, reviewHandler("mutate", &Mutator{Store: store}), "/mutate", body)
	assert.Less(t, len(answer), 2048)
	summary := `"policyattachment.io/impact-summary":"Atomic defaults on ` + shown + `: reaches no paths yet (predicted at admission)"`
	assert.True(t, strings.Contains(string(resp.Patch), summary), "the impact summary names the route by its first 64 bytes: %.300s", resp.Patch)
}
