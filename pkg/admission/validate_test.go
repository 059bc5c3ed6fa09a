package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

func review(t *testing.T, op admissionv1.Operation, group, kind, object string) admission.Request {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(object), &obj))
	raw, err := json.Marshal(obj)
	require.NoError(t, err)
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Operation: op, Namespace: "app", Name: "p",
		Kind:   metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
		Object: runtime.RawExtension{Raw: raw},
	}}
}

func validator(snap *index.Snapshot) *Validator {
	return &Validator{Store: readyStore(kinds.BuiltinKindTable(), snap)}
}

func TestValidatorDenialIsInvalid(t *testing.T) {
	resp := validator(index.New()).Handle(context.Background(), review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "namespace": "app", "managedFields": [{"manager": "kubectl"}]},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1"}], "color": "red"}}`))
	require.False(t, resp.Allowed)
	require.NotNil(t, resp.Result)
	assert.Equal(t, int32(http.StatusUnprocessableEntity), resp.Result.Code)
	assert.Equal(t, metav1.StatusReasonInvalid, resp.Result.Reason)
	assert.Equal(t, `ColorPolicy.policies.controller.io "p" is invalid: spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`, resp.Result.Message)
	require.Len(t, resp.Result.Details.Causes, 1)
	assert.Equal(t, "spec.targetRefs[0].kind", resp.Result.Details.Causes[0].Field)
}

func TestValidatorAllowsWithWarnings(t *testing.T) {
	resp := validator(index.New()).Handle(context.Background(), review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r1"}], "color": "red"}}`))
	assert.True(t, resp.Allowed)
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[0]: HTTPRoute app/r1 not found; the policy takes effect once it exists"}, resp.Warnings)
}

func TestValidatorUnknownKindUntouched(t *testing.T) {
	resp := validator(index.New()).Handle(context.Background(), review(t, admissionv1.Create, "", "ConfigMap", `{"metadata": {"name": "x"}}`))
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Warnings)
	assert.Empty(t, resp.Patches)
}

func TestValidatorMalformedObject(t *testing.T) {
	req := review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{}`)
	req.Object.Raw = []byte(`{"spec": [`)
	resp := validator(index.New()).Handle(context.Background(), req)
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusBadRequest), resp.Result.Code)
	assert.Equal(t, "decoding ColorPolicy app/p: unexpected end of JSON input", resp.Result.Message)
}

func TestValidatorNamespaceFromRequest(t *testing.T) {
	resp := validator(index.New()).Handle(context.Background(), review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "infra"}], "color": "red"}}`))
	require.False(t, resp.Allowed)
	assert.Equal(t, `ColorPolicy.policies.controller.io "p" is invalid: spec.targetRefs[0].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`, resp.Result.Message)
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &obj))
	return obj
}

func groupKindOfJSON(obj map[string]any) schema.GroupKind {
	gv, _ := schema.ParseGroupVersion(obj["apiVersion"].(string))
	return schema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}
}

func TestValidatorEnforcementModes(t *testing.T) {
	badRef := `{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1"}], "color": "red"}}`
	denial := `spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`
	cases := map[string]struct {
		mode         rules.Mode
		wantWarnings []string
	}{
		"Warn admits and says why": {mode: rules.Warn, wantWarnings: []string{denial + " (admitted: enforcement mode is Warn)"}},
		"DryRun admits silently":   {mode: rules.DryRun},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := validator(index.New())
			v.Store.UseConfig(&rules.Config{Enforcement: rules.Enforcement{Default: tc.mode}})
			counter := relaxedTotal.WithLabelValues(string(tc.mode), validation.ReasonInvalidTargetRef, "ColorPolicy")
			before := testutil.ToFloat64(counter)
			resp := v.Handle(context.Background(), review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", badRef))
			assert.True(t, resp.Allowed)
			assert.Equal(t, tc.wantWarnings, resp.Warnings)
			assert.Equal(t, before+1, testutil.ToFloat64(counter), "every relaxed denial is counted")
		})
	}
}

// readyStore is a store whose caches count as synced, as after start-up.
func readyStore(table *kinds.KindTable, snap *index.Snapshot) *clusterstate.Store {
	s := clusterstate.NewStore(table, snap)
	s.SetReady()
	return s
}

func btls(name string) string {
	return fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %q, "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}],
		         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`, name)
}

func TestValidatorRefusesUntilSynced(t *testing.T) {
	store := clusterstate.NewStore(kinds.BuiltinKindTable(), index.New())
	policy := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("early"))

	resp := (&Validator{Store: store}).Handle(context.Background(), policy)
	assert.False(t, resp.Allowed, "before sync a conflict would go unseen")
	assert.Equal(t, int32(http.StatusServiceUnavailable), resp.Result.Code)
	assert.Equal(t, "the policy attachment webhook is starting and has not read the cluster's policies yet, so it cannot judge this write; retry in a few seconds", resp.Result.Message)

	mutated := (&Mutator{Store: store}).Handle(context.Background(), policy)
	assert.True(t, mutated.Allowed)
	assert.Empty(t, mutated.Patches, "no prediction from an empty cache")

	deletion := (&Validator{Store: store}).Handle(context.Background(), deleteReview(t, kinds.GatewayGroup, "BackendTLSPolicy", "app", "early", btls("early")))
	assert.True(t, deletion.Allowed, "deletions never wait for the caches")

	store.SetReady()
	assert.True(t, (&Validator{Store: store}).Handle(context.Background(), policy).Allowed)
}

func TestValidatorReviewDeadline(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	v := &Validator{Store: store, Timeout: 20 * time.Millisecond}
	policy := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("slow"))

	// The review's time ran out before its verdict (in life: a stuck writer holds the
	// store; pkg/clusterstate tests that a review gives up then): it is refused in this
	// webhook's words, and reserves nothing.
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	before := testutil.ToFloat64(reviewTimeouts)
	resp := v.Handle(expired, policy)
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusServiceUnavailable), resp.Result.Code)
	assert.Equal(t, "policy attachment review of BackendTLSPolicy app/slow did not finish within 20ms (--review-timeout): the write was not checked, so it is refused; retry, and if it persists see the webhook's log and policyattachment_live_read_errors_total", resp.Result.Message)
	assert.Equal(t, before+1, testutil.ToFloat64(reviewTimeouts))
	assert.False(t, store.Has(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "slow"), "a refused review reserves nothing")

	other := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("next"))
	assert.True(t, v.Handle(context.Background(), other).Allowed, "the deadline is per review")
}

// TestValidatorLogsWhoWasDenied: each denied or relaxed review is logged once, with who
// asked and why; a clean one is not logged at all.
func TestValidatorLogsWhoWasDenied(t *testing.T) {
	badRef := `{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1"}], "color": "red"}}`
	clean := `{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "color": "red"}}`
	denial := `spec.targetRefs[0].kind: Unsupported value: \"Service\": InvalidTargetRef: supported values: \"gateway.networking.k8s.io/Gateway\", \"gateway.networking.k8s.io/HTTPRoute\"`
	cases := map[string]struct {
		mode   rules.Mode
		object string
		want   []string
	}{
		"denied": {object: badRef, want: []string{
			`"level"=0 "msg"="denied" "uid"="1" "operation"="CREATE" "kind"="ColorPolicy" "namespace"="app" "name"="p" "user"="alice@example.com" "dryRun"=false "reasons"=["InvalidTargetRef"] "denials"=["` + denial + `"]`}},
		"admitted by DryRun": {mode: rules.DryRun, object: badRef, want: []string{
			`"level"=0 "msg"="admitted despite denials, by enforcement mode" "uid"="1" "operation"="CREATE" "kind"="ColorPolicy" "namespace"="app" "name"="p" "user"="alice@example.com" "dryRun"=false "reasons"=["InvalidTargetRef"] "modes"=["DryRun"] "denials"=["` + denial + `"]`}},
		"clean": {object: clean},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lines []string
			ctx := logf.IntoContext(context.Background(), funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
			v := validator(index.New())
			if tc.mode != "" {
				v.Store.UseConfig(&rules.Config{Enforcement: rules.Enforcement{Default: tc.mode}})
			}
			req := review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", tc.object)
			req.UserInfo = authenticationv1.UserInfo{Username: "alice@example.com", Groups: []string{"team-a"}}
			v.Handle(ctx, req)
			assert.Equal(t, tc.want, lines)
		})
	}
}
