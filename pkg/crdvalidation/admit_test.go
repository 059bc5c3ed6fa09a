package crdvalidation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/test/kindsdrift"
)

// widgetCRD is a CRD written for these tests: a targetRefs list-map keyed by name with a
// kind enum and a CEL rule, a defaulted field, and the status subresource.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgetpolicies.example.io}
spec:
  group: example.io
  scope: Namespaced
  names: {kind: WidgetPolicy, plural: widgetpolicies}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [targetRefs]
            x-kubernetes-validations:
            - rule: "self.targetRefs.all(r, r.kind != 'Gateway' || !has(self.timeout))"
              message: a timeout is not allowed on a Gateway
            properties:
              timeout: {type: string}
              mode: {type: string, default: Strict, enum: [Strict, Loose]}
              targetRefs:
                type: array
                maxItems: 2
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [group, kind, name]
                  properties:
                    group: {type: string}
                    kind: {type: string, enum: [Gateway, HTTPRoute]}
                    name: {type: string, maxLength: 8}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func widgets(t *testing.T) *Schemas {
	t.Helper()
	var crd map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(widgetCRD), &crd))
	s := New()
	require.NoError(t, s.Add(crd))
	return s
}

func object(t testing.TB, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
	return obj
}

func TestAdmit(t *testing.T) {
	const head = "apiVersion: example.io/v1\nkind: WidgetPolicy\nmetadata: {name: w, namespace: app}\n"
	refs := field.NewPath("spec", "targetRefs")
	for _, tc := range []struct {
		name    string
		spec    string
		unknown []string
		errs    field.ErrorList
	}{
		{name: "valid", spec: "spec: {targetRefs: [{group: '', kind: HTTPRoute, name: r}], timeout: 1s}"},
		{
			name: "enum", spec: "spec: {targetRefs: [{group: '', kind: Service, name: s}]}",
			errs: field.ErrorList{
				field.NotSupported(refs.Index(0).Child("kind"), "Service", []string{"Gateway", "HTTPRoute"}),
				field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"),
			},
		},
		{
			name: "CEL rule", spec: "spec: {targetRefs: [{group: g, kind: Gateway, name: gw}], timeout: 1s}",
			errs: field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValueType{}, "a timeout is not allowed on a Gateway")},
		},
		{
			name: "list-map key twice", spec: "spec: {targetRefs: [{group: '', kind: HTTPRoute, name: r}, {group: g, kind: Gateway, name: r}]}",
			errs: field.ErrorList{field.Duplicate(refs.Index(1), map[string]any{"name": "r"})},
		},
		{
			name: "unknown fields", spec: "spec: {targetRefs: [{group: '', kind: HTTPRoute, name: r, port: 80}], tiemout: 1s}",
			unknown: []string{"spec.targetRefs[0].port", "spec.tiemout"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := widgets(t).Admit(context.Background(), object(t, head+tc.spec), nil)
			require.NoError(t, err)
			if tc.unknown == nil && tc.errs == nil {
				assert.Nil(t, r)
				return
			}
			require.NotNil(t, r)
			assert.Equal(t, tc.unknown, r.Unknown)
			assert.Equal(t, tc.errs, stripOrigins(r.Errors))
		})
	}
}

// stripOrigins drops what the API server's validators record for their own metrics, so
// that tests compare what users read.
func stripOrigins(errs field.ErrorList) field.ErrorList {
	for _, e := range errs {
		e.Origin, e.CoveredByDeclarative = "", false
	}
	return errs
}

func TestAdmitDefaultsWhatItStores(t *testing.T) {
	obj := object(t, "apiVersion: example.io/v1\nkind: WidgetPolicy\nmetadata: {name: w, namespace: app}\nspec: {targetRefs: [{group: '', kind: HTTPRoute, name: r}]}\nstatus: {ancestors: []}")
	r, err := widgets(t).Admit(context.Background(), obj, nil)
	require.NoError(t, err)
	assert.Nil(t, r)
	assert.Equal(t, "Strict", obj["spec"].(map[string]any)["mode"], "the schema's default is stored")
	assert.Equal(t, map[string]any{"ancestors": []any{}}, obj["status"], "status is kept as given")
}

func TestRefusalWordedAsTheAPIServer(t *testing.T) {
	s := widgets(t)
	r, err := s.Admit(context.Background(), object(t, "apiVersion: example.io/v1\nkind: WidgetPolicy\nmetadata: {name: w, namespace: app}\nspec: {targetRefs: [{group: g, kind: Gateway, name: gw}], timeout: 1s}"), nil)
	require.NoError(t, err)
	assert.Equal(t, `WidgetPolicy.example.io "w" is invalid: spec: Invalid value: a timeout is not allowed on a Gateway`, r.Error())

	r, err = s.Admit(context.Background(), object(t, "apiVersion: example.io/v1\nkind: WidgetPolicy\nmetadata: {name: w, namespace: app, labls: {}}\nspec: {targetRefs: []}"), nil)
	require.NoError(t, err)
	assert.Equal(t, `WidgetPolicy in version "v1" cannot be handled as a WidgetPolicy: strict decoding error: unknown field "metadata.labls"`, r.Error())
}

func TestAdmitWithoutItsCRD(t *testing.T) {
	r, err := widgets(t).Admit(context.Background(), object(t, "apiVersion: other.io/v1\nkind: Other\nmetadata: {name: o}\nspec: {anything: 1}"), nil)
	require.NoError(t, err)
	assert.Nil(t, r, "a kind whose CRD was not given is not judged")

	_, err = widgets(t).Admit(context.Background(), object(t, "apiVersion: example.io/v9\nkind: WidgetPolicy\nmetadata: {name: w}"), nil)
	assert.EqualError(t, err, "the CustomResourceDefinition widgetpolicies.example.io does not serve version v9")
}

// TestGatewayAPIsOwnCRDs: the Gateway API CRDs at the version in go.mod default a route
// written without rules (the rule matching path prefix /) and refuse, with their own CEL,
// a path match that is not absolute.
func TestGatewayAPIsOwnCRDs(t *testing.T) {
	dir, err := kindsdrift.ModuleDir(context.Background(), "sigs.k8s.io/gateway-api", gatewayAPIVersion(t))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "config", "crd", "experimental", "gateway.networking.k8s.io_httproutes.yaml"))
	require.NoError(t, err)
	s := New()
	require.NoError(t, s.Add(object(t, string(data))))

	route := object(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: app}\nspec: {parentRefs: [{name: gw}]}")
	r, err := s.Admit(context.Background(), route, nil)
	require.NoError(t, err)
	require.Nil(t, r)
	rules := route["spec"].(map[string]any)["rules"].([]any)
	assert.Equal(t, map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}, rules[0].(map[string]any)["matches"].([]any)[0])

	r, err = s.Admit(context.Background(), object(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: app}\nspec: {rules: [{matches: [{path: {type: PathPrefix, value: relative}}]}]}"), nil)
	require.NoError(t, err)
	require.NotNil(t, r)
	const absolute = "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"
	assert.Equal(t, field.ErrorList{
		field.Invalid(field.NewPath("spec", "rules").Index(0).Child("matches").Index(0).Child("path"), field.OmitValueType{}, absolute),
	}, stripOrigins(r.Errors))
	assert.Equal(t, `HTTPRoute.gateway.networking.k8s.io "r" is invalid: spec.rules[0].matches[0].path: Invalid value: `+absolute, r.Error())
}

// gatewayAPIVersion is the Gateway API version go.mod requires.
func gatewayAPIVersion(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "sigs.k8s.io/gateway-api" {
			return f[1]
		}
	}
	t.Fatal("go.mod requires no sigs.k8s.io/gateway-api")
	return ""
}

// TestAdmitObjectsBuiltInGo: an object built in Go (ints, not the int64s of decoded JSON)
// is judged as its JSON would be, not refused or panicked on.
func TestAdmitObjectsBuiltInGo(t *testing.T) {
	obj := map[string]any{"apiVersion": "example.io/v1", "kind": "WidgetPolicy",
		"metadata": map[string]any{"name": "w", "namespace": "app"},
		"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "HTTPRoute", "name": "r"}}}}
	r, err := widgets(t).Admit(context.Background(), obj, nil)
	require.NoError(t, err)
	assert.Nil(t, r)

	obj["spec"].(map[string]any)["targetRefs"] = []any{map[string]any{"group": "", "kind": "HTTPRoute", "name": 7}}
	r, err = widgets(t).Admit(context.Background(), obj, nil)
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, field.ErrorList{
		field.TypeInvalid(field.NewPath("spec", "targetRefs").Index(0).Child("name"), "integer", "spec.targetRefs[0].name in body must be of type string: \"integer\""),
		field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"),
	}, stripOrigins(r.Errors))
}
