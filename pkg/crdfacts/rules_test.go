package crdfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The CEL rules about target kinds, as the implementations write them: which restrict every
// policy, which one spec field, and which hold on a condition the facts do not keep.
func TestFieldOfRule(t *testing.T) {
	cases := map[string]struct {
		rule  string
		field string
		ruled bool
	}{
		"Envoy Gateway: a target rule": {
			rule: "has(self.targetRefs) ? self.targetRefs.all(ref, ref.kind in ['Gateway', 'HTTPRoute']) : true",
		},
		"Envoy Gateway: mergeType": {
			rule:  "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute'])",
			field: "mergeType", ruled: true,
		},
		"kgateway: autoHostRewrite": {
			rule:  "!has(self.autoHostRewrite) || ((has(self.targetRefs) && self.targetRefs.all(r, r.kind == 'HTTPRoute')) || (has(self.targetSelectors) && self.targetSelectors.all(r, r.kind == 'HTTPRoute')))",
			field: "autoHostRewrite", ruled: true,
		},
		"agentgateway: frontend": {
			rule:  "has(self.frontend) && has(self.targetRefs) ? self.targetRefs.all(t, t.kind == 'Gateway') : true",
			field: "frontend", ruled: true,
		},
		"agentgateway: a condition on a value": {
			rule:  "has(self.targetRefs) && has(self.traffic) && has(self.traffic.phase) && self.traffic.phase == 'PreRouting' ? self.targetRefs.all(t, t.kind in ['Gateway', 'ListenerSet']) : true",
			ruled: true,
		},
		"agentgateway: a nested field that excludes a kind": {
			rule:  "!has(self.backend) || !has(self.backend.mcp) || ((!has(self.targetRefs) || !self.targetRefs.exists(t, t.kind == 'Service')) && (!has(self.targetSelectors) || !self.targetSelectors.exists(t, t.kind == 'Service')))",
			ruled: true,
		},
		"a condition on two fields": {
			rule:  "has(self.a) && has(self.b) ? self.targetRefs.all(t, t.kind == 'Gateway') : true",
			ruled: true,
		},
		"a rule with no condition": {
			rule: "self.targetRefs.all(t, t.kind == 'Gateway')",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			field, _, ruled := fieldOfRule(tc.rule)
			assert.Equal(t, tc.field, field)
			assert.Equal(t, tc.ruled, ruled)
		})
	}
}

// kubebuilder's ExactlyOneOf rule over the target fields keeps targetSelectors apart, as
// the counted form does; over a target field and another field, that field is exclusive.
func TestExactlyOneOfRules(t *testing.T) {
	crd := &CRD{Served: []string{"v1"}, Schemas: map[string]map[string]any{"v1": {"properties": map[string]any{"spec": map[string]any{
		"x-kubernetes-validations": []any{
			map[string]any{"rule": "[has(self.targetRefs),has(self.targetSelectors)].filter(x,x==true).size() == 1"},
			map[string]any{"rule": "[has(self.targetRefs),has(self.selector)].filter(x,x==true).size() <= 1"},
			map[string]any{"rule": "[has(self.a),has(self.b)].filter(x,x==true).size() == 1"},
		},
		"properties": map[string]any{"targetRefs": map[string]any{}, "targetSelectors": map[string]any{}, "selector": map[string]any{}},
	}}}}}
	f := FactsOf(crd, "v1")
	assert.True(t, f.SelectorsExclusive)
	assert.Equal(t, []string{"selector"}, f.ExclusiveFields)
}
