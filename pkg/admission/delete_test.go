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
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

func deleteReview(t *testing.T, group, kind, namespace, name, old string) admission.Request {
	t.Helper()
	req := review(t, admissionv1.Delete, group, kind, old)
	req.Namespace, req.Name = namespace, name
	req.OldObject = runtime.RawExtension{Raw: req.Object.Raw}
	req.Object = runtime.RawExtension{}
	return req
}

func TestDeletionWarnings(t *testing.T) {
	store := storeOf(t, gatewayAllNamespaces,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r1", "namespace": "app"},
		  "spec": {"parentRefs": [{"name": "gw", "namespace": "infra"}], "rules": [{"backendRefs": [{"name": "b1", "port": 80}]}, {"backendRefs": [{"name": "b2", "port": 80}]}]}}`,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r2", "namespace": "web"},
		  "spec": {"parentRefs": [{"name": "gw", "namespace": "infra"}], "rules": [{"backendRefs": [{"name": "b3", "port": 80}]}]}}`,
		colorsGrant, sharedColorPolicy)
	v := &Validator{Store: store}

	resp := v.Handle(context.Background(), deleteReview(t, "policies.controller.io", "ColorPolicy", "app", "shared", `{"metadata": {"name": "shared", "namespace": "app"}}`))
	require.True(t, resp.Allowed)
	assert.Equal(t, []string{"DeleteImpact: deleting ColorPolicy app/shared removes atomic overrides from 3 paths in 2 namespaces; it is enforced on 3 of them"}, resp.Warnings)

	resp = v.Handle(context.Background(), deleteReview(t, "gateway.networking.k8s.io", "ReferenceGrant", "infra", "colors", `{
		"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant", "metadata": {"name": "colors", "namespace": "infra"},
		"spec": {"from": [{"group": "policies.controller.io", "kind": "ColorPolicy", "namespace": "app"}], "to": [{"group": "gateway.networking.k8s.io", "kind": "Gateway"}]}}`))
	require.True(t, resp.Allowed)
	// The deleter works in infra; the policy that relies on the grant lives in app, so
	// it is described, not named, unless the settings allow names.
	assert.Equal(t, []string{"DeleteImpact: deleting ReferenceGrant infra/colors withdraws the cross-namespace reference 1 accepted policy relies on: a ColorPolicy in namespace \"app\"; controllers may stop enforcing it and the next update of it will be denied"}, resp.Warnings)

	store.UseConfig(&rules.Config{Messages: validation.Messages{RevealOtherNamespaces: true}})
	resp = v.Handle(context.Background(), deleteReview(t, "gateway.networking.k8s.io", "ReferenceGrant", "infra", "colors", `{
		"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant", "metadata": {"name": "colors", "namespace": "infra"},
		"spec": {"from": [{"group": "policies.controller.io", "kind": "ColorPolicy", "namespace": "app"}], "to": [{"group": "gateway.networking.k8s.io", "kind": "Gateway"}]}}`))
	assert.Equal(t, []string{"DeleteImpact: deleting ReferenceGrant infra/colors withdraws the cross-namespace reference 1 accepted policy relies on: ColorPolicy app/shared; controllers may stop enforcing it and the next update of it will be denied"}, resp.Warnings)

	resp = v.Handle(context.Background(), deleteReview(t, "", "ConfigMap", "app", "x", `{"metadata": {"name": "x"}}`))
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Warnings)
}

// The old object of a DELETE reaches the handler through the HTTP door as a view into the
// request body (bodyView): it must still be the old object when fields follow it in the
// body, as they do in what the API server sends (dryRun, options).
func TestDeletionThroughTheDoorReadsTheOldObject(t *testing.T) {
	store := storeOf(t, gatewayAllNamespaces, colorsGrant, sharedColorPolicy)
	door := reviewHandler("validate", &Validator{Store: store})
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"7",
		"kind":{"group":"gateway.networking.k8s.io","version":"v1beta1","kind":"ReferenceGrant"},
		"resource":{"group":"gateway.networking.k8s.io","version":"v1beta1","resource":"referencegrants"},
		"name":"colors","namespace":"infra","operation":"DELETE","userInfo":{"username":"admin"},"object":null,
		"oldObject":{"apiVersion":"gateway.networking.k8s.io/v1beta1","kind":"ReferenceGrant","metadata":{"name":"colors","namespace":"infra"},
		  "spec":{"from":[{"group":"policies.controller.io","kind":"ColorPolicy","namespace":"app"}],"to":[{"group":"gateway.networking.k8s.io","kind":"Gateway"}]}},
		"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"DeleteOptions","propagationPolicy":"Background"}}}`
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	door.ServeHTTP(rec, req)

	require.Equal(t, http.StatusOK, rec.Code)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.True(t, out.Response.Allowed)
	assert.Equal(t, []string{`DeleteImpact: deleting ReferenceGrant infra/colors withdraws the cross-namespace reference 1 accepted policy relies on: a ColorPolicy in namespace "app"; controllers may stop enforcing it and the next update of it will be denied`},
		out.Response.Warnings)
}

// The objects the deletion tests share: a Gateway open to all namespaces, a ReferenceGrant
// from ColorPolicies in app to Gateways in infra, and a ColorPolicy in app relying on it.
const (
	gatewayAllNamespaces = `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "gw", "namespace": "infra"},
		"spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}]}}`
	colorsGrant = `{"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant", "metadata": {"name": "colors", "namespace": "infra"},
		"spec": {"from": [{"group": "policies.controller.io", "kind": "ColorPolicy", "namespace": "app"}], "to": [{"group": "gateway.networking.k8s.io", "kind": "Gateway"}]}}`
	sharedColorPolicy = `{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "shared", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "infra"}], "overrides": {"color": "red"}}}`
)

// storeOf is a ready store holding the objects, given as JSON.
func storeOf(t *testing.T, objects ...string) *clusterstate.Store {
	t.Helper()
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	for _, obj := range objects {
		o := decodeJSON(t, obj)
		store.Upsert(groupKindOfJSON(o), o)
	}
	return store
}
