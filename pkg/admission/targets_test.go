package admission

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// targetWorld: Gateway infra/gw with a default of its own and a route app/store on it, whose
// policy attaches nowhere else; Service app/store with a BackendTLSPolicy; Gateway infra/bare
// with nothing around it.
var targetWorld = []string{
	gatewayAllNamespaces,
	`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "bare", "namespace": "infra"},
	  "spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}`,
	`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "store", "namespace": "app"},
	  "spec": {"parentRefs": [{"name": "gw", "namespace": "infra"}], "rules": [{"backendRefs": [{"name": "store", "port": 443}]}]}}`,
	`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "store", "namespace": "app"}, "spec": {"ports": [{"name": "https", "port": 443}]}}`,
	`{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "gw-defaults", "namespace": "infra"},
	  "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "defaults": {"color": "red"}}}`,
	`{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "store-blue", "namespace": "app"},
	  "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "store"}], "color": "blue"}}`,
	`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": {"name": "store-tls", "namespace": "app"},
	  "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "store", "sectionName": "https"}],
	           "validation": {"hostname": "store.app", "wellKnownCACertificates": "System"}}}`,
}

const (
	gatewayDeleteWarningInfra = `DeleteImpact: deleting Gateway infra/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy infra/gw-defaults`
	gatewayDeleteWarningApp   = `DeleteImpact: deleting Gateway infra/gw leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "app"`
	gatewayDeleteRefusal      = `TargetInUse: deleting Gateway infra/gw is refused (targetDeletions mode Deny in namespace "infra"): ` +
		`it leaves 1 policy without a target, so it applies nowhere: ColorPolicy infra/gw-defaults; ` +
		`it leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "app"; ` +
		`retarget or delete those policies first, or ask your platform team to lift the mode`
)

// deleteTargetReview is a DELETE of a target as the API server sends it through the door:
// the old object, the requester, options after the object.
func deleteTargetReview(group, version, kind, resource, namespace, name, user string, dryRun bool) string {
	old, _ := json.Marshal(map[string]any{"apiVersion": strings.TrimPrefix(group+"/"+version, "/"), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace}})
	review, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": map[string]any{
		"uid": "7", "kind": map[string]any{"group": group, "version": version, "kind": kind},
		"resource": map[string]any{"group": group, "version": version, "resource": resource},
		"name":     name, "namespace": namespace, "operation": "DELETE", "userInfo": map[string]any{"username": user},
		"object": nil, "oldObject": json.RawMessage(old), "dryRun": dryRun,
		"options": map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "propagationPolicy": "Background"},
	}})
	return string(review)
}

// targetReviewThroughTheDoor posts a review to the targets door and returns its response.
func targetReviewThroughTheDoor(t *testing.T, store *clusterstate.Store, body string) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, PathTargets, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	reviewHandler("targets", &TargetGuard{Store: store}).ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.Equal(t, "7", string(out.Response.UID))
	return out.Response
}

func denyTargetDeletionsIn(namespace string) *rules.Config {
	c := &rules.Config{TargetDeletions: rules.TargetDeletions{Rules: []rules.TargetDeletionRule{{
		Mode: rules.Deny, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace}},
	}}}}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return c
}

func TestTargetDeletionThroughTheDoor(t *testing.T) {
	gateway := deleteTargetReview(kinds.GatewayGroup, "v1", "Gateway", "gateways", "infra", "gw", "alice", false)
	cases := map[string]struct {
		config      *rules.Config
		body        string
		notReady    bool
		wantAllowed bool
		wantWarn    []string
		wantRefusal string
	}{
		"warned by default": {body: gateway, wantAllowed: true, wantWarn: []string{gatewayDeleteWarningInfra, gatewayDeleteWarningApp}},
		"a dry run is warned alike": {body: deleteTargetReview(kinds.GatewayGroup, "v1", "Gateway", "gateways", "infra", "gw", "alice", true),
			wantAllowed: true, wantWarn: []string{gatewayDeleteWarningInfra, gatewayDeleteWarningApp}},
		"refused where the mode is Deny": {config: denyTargetDeletionsIn("infra"), body: gateway, wantRefusal: gatewayDeleteRefusal},
		"warned where another namespace's mode is Deny": {config: denyTargetDeletionsIn("edge"), body: gateway,
			wantAllowed: true, wantWarn: []string{gatewayDeleteWarningInfra, gatewayDeleteWarningApp}},
		"a deletion that strands nothing is never refused": {config: denyTargetDeletionsIn("infra"),
			body: deleteTargetReview(kinds.GatewayGroup, "v1", "Gateway", "gateways", "infra", "bare", "alice", false), wantAllowed: true},
		"the namespace controller is warned, never refused": {config: denyTargetDeletionsIn("infra"),
			body:        deleteTargetReview(kinds.GatewayGroup, "v1", "Gateway", "gateways", "infra", "gw", "system:serviceaccount:kube-system:namespace-controller", false),
			wantAllowed: true, wantWarn: []string{gatewayDeleteWarningInfra, gatewayDeleteWarningApp}},
		"DryRun admits silently":              {config: &rules.Config{TargetDeletions: rules.TargetDeletions{Default: rules.DryRun}}, body: gateway, wantAllowed: true},
		"not synced yet: admitted unreviewed": {config: denyTargetDeletionsIn("infra"), body: gateway, notReady: true, wantAllowed: true},
		"a route": {body: deleteTargetReview(kinds.GatewayGroup, "v1", "HTTPRoute", "httproutes", "app", "store", "bob", false), wantAllowed: true,
			wantWarn: []string{`DeleteImpact: deleting HTTPRoute app/store leaves 1 policy without a target, so it applies nowhere: ColorPolicy app/store-blue`}},
		"a Service, not reviewed unless the config asks": {config: denyTargetDeletionsIn("app"),
			body: deleteTargetReview("", "v1", "Service", "services", "app", "store", "bob", false), wantAllowed: true},
		"a Service, when the config asks": {
			config: &rules.Config{TargetDeletions: rules.TargetDeletions{Services: true}},
			body:   deleteTargetReview("", "v1", "Service", "services", "app", "store", "bob", false), wantAllowed: true,
			wantWarn: []string{`DeleteImpact: deleting Service app/store leaves 1 policy without a target, so it applies nowhere: BackendTLSPolicy app/store-tls`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := storeOf(t, targetWorld...)
			store.UseConfig(tc.config)
			if tc.notReady {
				store = clusterstate.NewStore(kinds.BuiltinKindTable(), index.New())
			}
			resp := targetReviewThroughTheDoor(t, store, tc.body)
			assert.Equal(t, tc.wantAllowed, resp.Allowed)
			assert.Equal(t, tc.wantWarn, resp.Warnings)
			require.NotNil(t, resp.Result)
			if tc.wantRefusal == "" {
				assert.Equal(t, &metav1.Status{Code: http.StatusOK}, resp.Result)
				return
			}
			assert.Equal(t, &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: tc.wantRefusal}, resp.Result)
			assert.Equal(t, map[string]string{AuditReason: "TargetInUse"}, resp.AuditAnnotations)
		})
	}
}

// Only DELETE is reviewed; a review without a request is refused as every door refuses it.
func TestTargetGuardOtherOperations(t *testing.T) {
	g := &TargetGuard{Store: storeOf(t, targetWorld...)}
	g.Store.UseConfig(denyTargetDeletionsIn("infra"))
	update := review(t, admissionv1.Update, kinds.GatewayGroup, "Gateway", gatewayAllNamespaces)
	update.Namespace, update.Name = "infra", "gw"
	resp := g.Handle(context.Background(), update)
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Warnings)

	resp = g.Handle(context.Background(), admission.Request{})
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusBadRequest), resp.Result.Code)

	// Called directly, the requester comes from the request itself.
	del := deleteReview(t, kinds.GatewayGroup, "Gateway", "infra", "gw", gatewayAllNamespaces)
	del.UserInfo = authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:generic-garbage-collector"}
	resp = g.Handle(context.Background(), del)
	assert.True(t, resp.Allowed, "the garbage collector deletes on a deleted owner's behalf")
	assert.Equal(t, []string{gatewayDeleteWarningInfra, gatewayDeleteWarningApp}, []string(resp.Warnings))
}
