package crdfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// A NameNamespace reference (NGINX Gateway Fabric's apPolicyRef, kgateway's secretRef: a name
// and a namespace, no kind) is no reference-shaped field for FactsOf; a row that lists one
// drifts from nothing, while an ObjectReference at a path the CRD has no such field at does.
func TestCompareNameNamespaceReference(t *testing.T) {
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(sampleCRD), &obj))
	crd := FromObject(obj)
	row := &kinds.KindRow{
		Group: "example.io", Kind: "SamplePolicy", Versions: []string{"v1"},
		MaxTargetRefs:   4,
		TargetRefFields: []string{"targetRefs", "targetSelectors"},
		TargetNamespace: kinds.TargetNamespaceForbidden,
		Targets: []kinds.TargetKind{
			{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
			{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"},
		},
		ExclusiveFields:    []string{"selector"},
		SelectorsExclusive: true,
		Strategy:           kinds.Strategy{Field: "mergeType", TargetKinds: []string{"HTTPRoute"}},
		References: []kinds.Reference{
			{Path: "auth.backendRefs[]", Namespaced: true, Kinds: []string{"Backend", "Service"}},
			{Path: "auth.policyRef", Shape: kinds.NameNamespaceShape, DefaultKind: "APPolicy", Namespaced: true},
			{Path: "auth.missingRef", Shape: kinds.ObjectReferenceShape},
		},
	}
	drift, _ := Compare(row, crd)
	var got []string
	for _, d := range drift {
		if d.Fact == "reference" {
			got = append(got, d.String())
		}
	}
	assert.Equal(t, []string{
		"example.io/SamplePolicy reference auth.missingRef: row lists it; CRD has no reference-shaped field there",
	}, got)
}
