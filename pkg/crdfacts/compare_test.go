package crdfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// A literal CRD in the shape of Envoy Gateway's and Istio's: every fact FactsOf reads.
const sampleCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1alpha1
    served: false
    storage: false
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations:
            - rule: "has(self.targetRefs) ? self.targetRefs.all(ref, ref.kind in ['Gateway', 'HTTPRoute']) : true"
            - rule: "has(self.targetRefs) ? self.targetRefs.all(ref, ref.group == 'gateway.networking.k8s.io') : true"
            - rule: "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute'])"
            - rule: "!has(self.special) || self.targetRefs.all(ref, ref.kind == 'Gateway')"
            - rule: "(has(self.selector) ? 1 : 0) + (has(self.targetRefs) ? 1 : 0) <= 1"
            - rule: "(has(self.targetSelectors) ? 1 : 0) + (has(self.targetRefs) ? 1 : 0) <= 1"
            properties:
              targetRefs:
                maxItems: 4
                items:
                  properties:
                    group: {type: string}
                    kind: {type: string}
                    name: {type: string}
                    namespace:
                      type: string
                      x-kubernetes-validations:
                      - rule: self.size() == 0
              targetSelectors:
                items:
                  properties:
                    kind: {type: string}
                    matchLabels: {type: object}
              mergeType: {type: string}
              special: {type: string}
              auth:
                x-kubernetes-validations:
                - rule: "self.backendRefs.all(f, f.kind == 'Service' || f.kind == 'Backend')"
                properties:
                  backendRefs:
                    items:
                      properties:
                        name: {type: string}
                        kind: {type: string}
                        namespace: {type: string}
                  secretRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, enum: [Secret]}
                  caRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, pattern: "^(ConfigMap|Secret)$"}
                  otherRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, pattern: "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"}
`

func TestFactsOfAndCompare(t *testing.T) {
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(sampleCRD), &obj))
	crd := FromObject(obj)
	assert.Equal(t, []string{"v1"}, crd.Served)

	f := FactsOf(crd, "v1")
	assert.Equal(t, []string{"targetRefs", "targetSelectors"}, f.TargetRefFields)
	assert.Equal(t, 4, f.MaxTargetRefs)
	assert.Equal(t, []string{"Gateway", "HTTPRoute"}, f.TargetKinds)
	assert.Equal(t, []string{"gateway.networking.k8s.io"}, f.TargetGroups)
	assert.Equal(t, map[string][]string{"mergeType": {"HTTPRoute"}, "special": {"Gateway"}}, f.FieldTargetKinds)
	assert.Equal(t, "forbidden", f.TargetNamespace)
	assert.Equal(t, []string{"selector"}, f.ExclusiveFields)
	assert.True(t, f.SelectorsExclusive)
	assert.Equal(t, []Ref{
		{Path: "auth.backendRefs[]", Namespaced: true, Kinds: []string{"Backend", "Service"}},
		{Path: "auth.caRef", Kinds: []string{"ConfigMap", "Secret"}},
		{Path: "auth.otherRef"},
		{Path: "auth.secretRef", Kinds: []string{"Secret"}},
	}, f.References)

	row := &kinds.KindRow{
		Group: "example.io", Kind: "SamplePolicy", Versions: []string{"v1", "v1alpha1"},
		MaxTargetRefs:   16,
		TargetRefFields: []string{"targetRef", "targetRefs"},
		Targets: []kinds.TargetKind{
			{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
			{Group: "", Kind: "Service"},
		},
		Strategy: kinds.Strategy{Field: "mergeType", TargetKinds: []string{"HTTPRoute"}},
		References: []kinds.Reference{
			{Path: "auth.secretRefs[]"},
			{Path: "auth.caRef", Kinds: []string{"Secret", "ClusterTrustBundle"}},
		},
	}
	drift, _ := Compare(row, crd)
	var got []string
	for _, d := range drift {
		got = append(got, d.String())
	}
	assert.Equal(t, []string{
		"example.io/SamplePolicy versions v1alpha1: row lists it; CRD does not serve it",
		"example.io/SamplePolicy targetRefFields targetRef: row reads it; CRD has no such field at v1",
		"example.io/SamplePolicy targetRefFields targetSelectors: row does not read it; CRD has it at v1",
		"example.io/SamplePolicy maxTargetRefs: row at most 16; CRD at most 4",
		"example.io/SamplePolicy targetKinds HTTPRoute: row does not admit it; CRD admits it",
		"example.io/SamplePolicy targetKinds Service: row admits it; CRD refuses it",
		`example.io/SamplePolicy targetGroups "": row admits it; CRD refuses it`,
		"example.io/SamplePolicy fieldTargetKinds special: row no rule; CRD only [Gateway]",
		"example.io/SamplePolicy exclusiveFields selector: row admits it with a target; CRD refuses it with a target",
		"example.io/SamplePolicy selectorsExclusive: row false; CRD true",
		"example.io/SamplePolicy targetNamespace: row own namespace only; CRD forbidden: must be empty or absent",
		"example.io/SamplePolicy reference auth.backendRefs[]: row does not list it; CRD a reference with a namespace field",
		"example.io/SamplePolicy referenceKinds auth.caRef ConfigMap: row refuses it; CRD admits it",
		"example.io/SamplePolicy referenceKinds auth.caRef ClusterTrustBundle: row admits it; CRD refuses it",
		"example.io/SamplePolicy reference auth.secretRefs[]: row lists it; CRD has no reference-shaped field there",
	}, got)
}

// Every version the row lists is read; a fact is reported once.
func TestCompareReadsEveryListedVersion(t *testing.T) {
	schema := func(maxItems int, withRef bool) map[string]any {
		ref := map[string]any{"properties": map[string]any{"kind": map[string]any{}, "name": map[string]any{}, "namespace": map[string]any{}}}
		props := map[string]any{"targetRefs": map[string]any{"maxItems": float64(maxItems), "items": ref}}
		if withRef {
			props["backendRef"] = ref
		}
		return map[string]any{"properties": map[string]any{"spec": map[string]any{"properties": props}}}
	}
	crd := &CRD{
		Group: "example.io", Kind: "SamplePolicy", Served: []string{"v1alpha1", "v1beta1", "v1"}, Storage: "v1",
		Schemas: map[string]map[string]any{"v1": schema(8, false), "v1beta1": schema(4, true), "v1alpha1": schema(2, true)},
	}
	row := &kinds.KindRow{
		Group: "example.io", Kind: "SamplePolicy", Versions: []string{"v1", "v1beta1", "v1alpha1"},
		TargetRefFields: []string{"targetRefs"}, MaxTargetRefs: 8, CrossNamespaceTargets: true,
	}
	drift, facts := Compare(row, crd)
	assert.Equal(t, "v1", facts.Version)
	var got []string
	for _, d := range drift {
		got = append(got, d.String())
	}
	assert.Equal(t, []string{
		"example.io/SamplePolicy maxTargetRefs: row at most 8; CRD at most 2",
		"example.io/SamplePolicy reference backendRef: row does not list it; CRD a reference with a namespace field",
	}, got)
}

// A row's fieldTargets are compared with the CRD's per-field rules as its strategy field's
// rule is: the same kinds, other kinds, a rule the CRD lacks, a rule the row lacks.
func TestCompareFieldTargets(t *testing.T) {
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(sampleCRD), &obj))
	crd := FromObject(obj)
	cases := map[string]struct {
		fieldTargets []kinds.FieldTarget
		want         []string
	}{
		"the CRD's kinds": {fieldTargets: []kinds.FieldTarget{{Field: "special", TargetKinds: []string{"Gateway"}}}},
		"more kinds than the CRD's": {
			fieldTargets: []kinds.FieldTarget{{Field: "special", TargetKinds: []string{"HTTPRoute", "Gateway"}}},
			want:         []string{"example.io/SamplePolicy fieldTargetKinds special: row only [HTTPRoute Gateway]; CRD only [Gateway]"},
		},
		"a rule the CRD lacks, and none where it has one": {
			fieldTargets: []kinds.FieldTarget{{Field: "extra", TargetKinds: []string{"HTTPRoute"}}},
			want: []string{
				"example.io/SamplePolicy fieldTargetKinds special: row no rule; CRD only [Gateway]",
				"example.io/SamplePolicy fieldTargetKinds extra: row only [HTTPRoute]; CRD no rule",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			row := &kinds.KindRow{
				Group: "example.io", Kind: "SamplePolicy", TargetRefFields: []string{"targetRefs", "targetSelectors"},
				Strategy:     kinds.Strategy{Field: "mergeType", TargetKinds: []string{"HTTPRoute"}},
				FieldTargets: tc.fieldTargets,
			}
			drift, _ := Compare(row, crd)
			var got []string
			for _, d := range drift {
				if d.Fact == kinds.FactFieldTargetKinds {
					got = append(got, d.String())
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
