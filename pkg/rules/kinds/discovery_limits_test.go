package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kind known only from its CRD label takes its limit on targetRefs from the CRD: the
// greatest maxItems its versions set, or none when one version sets none.
func TestRowFromCRDReadsMaxItems(t *testing.T) {
	version := func(name string, targetRefs map[string]any) any {
		v := map[string]any{"name": name, "storage": name == "v1"}
		if targetRefs != nil {
			v["schema"] = map[string]any{"openAPIV3Schema": map[string]any{"properties": map[string]any{
				"spec": map[string]any{"properties": map[string]any{"targetRefs": targetRefs}}}}}
		}
		return v
	}
	crd := func(versions ...any) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "ps.a.io", "labels": map[string]any{PolicyLabel: "Inherited"}},
			"spec":     map[string]any{"group": "a.io", "scope": "Namespaced", "names": map[string]any{"kind": "P"}, "versions": versions},
		}
	}
	cases := map[string]struct {
		crd  map[string]any
		want int
	}{
		"maxItems 16, as a YAML decoder gives it": {crd: crd(version("v1", map[string]any{"type": "array", "maxItems": int64(16)})), want: 16},
		"maxItems 8, as encoding/json gives it":   {crd: crd(version("v1", map[string]any{"type": "array", "maxItems": float64(8)})), want: 8},
		"two versions: the greater":               {crd: crd(version("v1alpha1", map[string]any{"maxItems": int64(8)}), version("v1", map[string]any{"maxItems": int64(16)})), want: 16},
		"one version without maxItems: no limit":  {crd: crd(version("v1alpha1", map[string]any{"type": "array"}), version("v1", map[string]any{"maxItems": int64(16)}))},
		"no schema: no limit":                     {crd: crd(version("v1", nil))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, labelled, err := RowFromCRD(tc.crd)
			require.NoError(t, err)
			require.True(t, labelled)
			assert.Equal(t, tc.want, got.Row.MaxTargetRefs)
		})
	}
}
