package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A labelled CRD whose every version describes spec without a target field is targetless:
// no object of it can name a target (the API server prunes one), so no door judges it. A
// version that can name none makes targets optional; a schema that says nothing of spec's
// fields says nothing.
func TestRowFromCRDTargetless(t *testing.T) {
	version := func(name string, spec map[string]any) any {
		v := map[string]any{"name": name, "served": true, "storage": name == "v1"}
		if spec != nil {
			v["schema"] = map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "properties": map[string]any{"spec": spec}}}
		}
		return v
	}
	fields := func(names ...string) map[string]any {
		props := map[string]any{}
		for _, n := range names {
			props[n] = map[string]any{"type": "object"}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	cases := map[string]struct {
		versions                    []any
		targetless, targetsOptional bool
	}{
		// agentgateway's AgentgatewayParameters at 75b4e6ce: labelled Direct, a parameters
		// kind (env, image, deployment, ...) with no target field.
		"no target field":         {versions: []any{version("v1", fields("env", "image", "deployment"))}, targetless: true, targetsOptional: true},
		"an empty spec":           {versions: []any{version("v1", fields())}, targetless: true, targetsOptional: true},
		"targetRefs":              {versions: []any{version("v1", fields("targetRefs", "retries"))}},
		"targetRef":               {versions: []any{version("v1", fields("targetRef"))}},
		"targetSelectors only":    {versions: []any{version("v1", fields("targetSelectors"))}},
		"one version of two":      {versions: []any{version("v1alpha1", fields("env")), version("v1", fields("targetRefs"))}, targetsOptional: true},
		"spec keeps unknown":      {versions: []any{version("v1", map[string]any{"type": "object", "properties": map[string]any{}, "x-kubernetes-preserve-unknown-fields": true})}},
		"spec without properties": {versions: []any{version("v1", map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true})}},
		"no schema":               {versions: []any{version("v1", nil)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			crd := map[string]any{
				"metadata": map[string]any{"name": "ps.a.io", "labels": map[string]any{PolicyLabel: "Direct"}},
				"spec":     map[string]any{"group": "a.io", "names": map[string]any{"kind": "P"}, "versions": tc.versions},
			}
			got, labelled, err := RowFromCRD(crd)
			require.NoError(t, err)
			require.True(t, labelled)
			want, _ := DiscoveredRow("a.io", "P", Namespaced, "Direct")
			for _, v := range tc.versions {
				want.Versions = append(want.Versions, v.(map[string]any)["name"].(string))
			}
			want.TargetsOptional = tc.targetsOptional
			assert.Equal(t, CRDRow{Row: want, StoredVersion: "v1", Targetless: tc.targetless}, got)

			// A cache that keeps only SchemaForDiscovery of each version reads the same.
			var trimmed []any
			for _, v := range tc.versions {
				m := map[string]any{}
				for k, x := range v.(map[string]any) {
					m[k] = x
				}
				if s, ok := m["schema"].(map[string]any); ok {
					m["schema"] = SchemaForDiscovery(s)
				}
				trimmed = append(trimmed, m)
			}
			crd["spec"].(map[string]any)["versions"] = trimmed
			again, _, err := RowFromCRD(crd)
			require.NoError(t, err)
			assert.Equal(t, got, again, "read from SchemaForDiscovery")
		})
	}
}

// SchemaForDiscovery keeps spec's target fields (targetRefs with its maxItems), and whether
// spec keeps unknown fields, nothing else; nil where no spec is described.
func TestSchemaForDiscovery(t *testing.T) {
	full := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
		"metadata": map[string]any{"type": "object"},
		"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
			"targetRefs":      map[string]any{"type": "array", "maxItems": int64(16), "items": map[string]any{"type": "object"}},
			"targetSelectors": map[string]any{"type": "array", "maxItems": int64(4)},
			"retries":         map[string]any{"type": "integer"},
		}},
	}}}
	assert.Equal(t, map[string]any{"openAPIV3Schema": map[string]any{"properties": map[string]any{
		"spec": map[string]any{"x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
			"targetRefs":      map[string]any{"maxItems": int64(16)},
			"targetSelectors": map[string]any{},
		}},
	}}}, SchemaForDiscovery(full))
	assert.Nil(t, SchemaForDiscovery(map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}))
	assert.Nil(t, SchemaForDiscovery(nil))
}
