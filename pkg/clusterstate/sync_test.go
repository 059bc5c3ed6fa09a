package clusterstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// The CRD cache keeps what discovery reads of each schema: a labelled CRD reads the same row,
// and is as targetless, trimmed or not (a CRD installed while the webhook runs is read from
// the cache); the rest of the schema is gone.
func TestTrimForRulesKeepsWhatDiscoveryReads(t *testing.T) {
	crd := func(specProps string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ps.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations: {note: x}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: P, plural: ps}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties: `+specProps), &u.Object))
		return u
	}
	cases := map[string]struct {
		specProps  string
		targetless bool
		maxRefs    int
	}{
		"no target field": {specProps: "{image: {type: string, description: the proxy image}}", targetless: true},
		"targetRefs":      {specProps: "{targetRefs: {type: array, maxItems: 16, items: {type: object}}, retries: {type: integer}}", maxRefs: 16},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			full, _, err := kinds.RowFromCRD(crd(tc.specProps).Object)
			require.NoError(t, err)
			trimmed, err := TrimForRules(crd(tc.specProps))
			require.NoError(t, err)
			got, labelled, err := kinds.RowFromCRD(trimmed.(*unstructured.Unstructured).Object)
			require.NoError(t, err)
			assert.True(t, labelled)
			assert.Equal(t, full, got)
			assert.Equal(t, tc.targetless, got.Targetless)
			assert.Equal(t, tc.maxRefs, got.Row.MaxTargetRefs)
			schema, _, _ := unstructured.NestedFieldNoCopy(trimmed.(*unstructured.Unstructured).Object, "spec", "versions")
			assert.NotContains(t, yamlOf(t, schema), "description", "the rest of the schema is dropped")
			assert.NotContains(t, yamlOf(t, schema), "retries")
		})
	}
}

func yamlOf(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(out)
}
