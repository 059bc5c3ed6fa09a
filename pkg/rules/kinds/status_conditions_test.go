package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Each kind's conditions mean, in the webhook's terms, what its implementation's code says
// they mean: Gateway API's PolicyAncestorStatus for every kind, Envoy Gateway's Overridden
// and Merged on its own kinds, Kuadrant's Enforced on its policy-wide conditions.
func TestStatusMeaning(t *testing.T) {
	table := BuiltinKindTable()
	row := func(group, kind string) *KindRow {
		r, ok := table.Lookup(schema.GroupKind{Group: group, Kind: kind})
		require.True(t, ok, kind)
		return r
	}
	backendTLS := row(GatewayGroup, "BackendTLSPolicy")
	btp := row("gateway.envoyproxy.io", "BackendTrafficPolicy")
	ctp := row("gateway.envoyproxy.io", "ClientTrafficPolicy")
	rlp := row("kuadrant.io", "RateLimitPolicy")
	dns := row("kuadrant.io", "DNSPolicy")
	accepted := Condition{Type: "Accepted", Status: "True", Reason: "Accepted"}
	for name, tc := range map[string]struct {
		row        *KindRow
		conditions []Condition
		means      []string
		by         []Condition
	}{
		"Gateway API accepted: says nothing of precedence": {backendTLS, []Condition{accepted},
			[]string{"Enforced", "PartiallyEnforced", "Overridden", "NoTargets"}, []Condition{accepted}},
		"Gateway API Conflicted is a refusal": {backendTLS, []Condition{{Type: "Accepted", Status: "False", Reason: "Conflicted"}},
			[]string{MeansRefused}, []Condition{{Type: "Accepted", Status: "False", Reason: "Conflicted"}}},
		"Gateway API TargetNotFound applies nowhere": {backendTLS, []Condition{{Type: "Accepted", Status: "False", Reason: "TargetNotFound"}},
			[]string{"NoTargets"}, []Condition{{Type: "Accepted", Status: "False", Reason: "TargetNotFound"}}},
		"no Accepted condition yet":                                {backendTLS, []Condition{{Type: "ResolvedRefs", Status: "True"}}, []string{MeansUnknown}, nil},
		"Envoy Gateway accepted and not overridden: applied whole": {btp, []Condition{accepted}, []string{"Enforced"}, []Condition{accepted}},
		"Envoy Gateway Overridden": {ctp, []Condition{accepted, {Type: "Overridden", Status: "True", Reason: "Overridden"}},
			[]string{"PartiallyEnforced", "Overridden"}, []Condition{{Type: "Overridden", Status: "True", Reason: "Overridden"}}},
		"Envoy Gateway Merged alone says nothing of what yields": {btp, []Condition{{Type: "Merged", Status: "True", Reason: "Merged"}},
			[]string{"Enforced", "PartiallyEnforced", "Overridden"}, []Condition{{Type: "Merged", Status: "True", Reason: "Merged"}}},
		"a refusal wins over Envoy Gateway's other conditions": {btp, []Condition{{Type: "Overridden", Status: "True"}, {Type: "Accepted", Status: "False", Reason: "Invalid"}},
			[]string{MeansRefused}, []Condition{{Type: "Accepted", Status: "False", Reason: "Invalid"}}},
		"Kuadrant partially enforced, told by its message": {rlp, []Condition{accepted, {Type: "Enforced", Status: "True", Reason: "Enforced", Message: "RateLimitPolicy has been partially enforced"}},
			[]string{"PartiallyEnforced"}, []Condition{{Type: "Enforced", Status: "True", Reason: "Enforced", Message: "RateLimitPolicy has been partially enforced"}}},
		"Kuadrant enforced": {rlp, []Condition{accepted, {Type: "Enforced", Status: "True", Reason: "Enforced", Message: "RateLimitPolicy has been successfully enforced"}},
			[]string{"Enforced"}, []Condition{{Type: "Enforced", Status: "True", Reason: "Enforced", Message: "RateLimitPolicy has been successfully enforced"}}},
		"Kuadrant overridden": {rlp, []Condition{accepted, {Type: "Enforced", Status: "False", Reason: "Overridden"}},
			[]string{"Overridden"}, []Condition{{Type: "Enforced", Status: "False", Reason: "Overridden"}}},
		"Kuadrant syncing: nothing to compare": {rlp, []Condition{accepted, {Type: "Enforced", Status: "False", Reason: "Unknown", Message: "RateLimitPolicy waiting for the following components to sync: [Limitador]"}},
			[]string{MeansUnknown}, []Condition{{Type: "Enforced", Status: "False", Reason: "Unknown", Message: "RateLimitPolicy waiting for the following components to sync: [Limitador]"}}},
		"Kuadrant DNSPolicy: Enforced speaks of records, only Accepted is read": {dns, []Condition{accepted, {Type: "Enforced", Status: "True", Message: "DNSPolicy has been partially enforced"}},
			[]string{"Enforced", "PartiallyEnforced", "Overridden", "NoTargets"}, []Condition{accepted}},
	} {
		t.Run(name, func(t *testing.T) {
			means, by := tc.row.StatusMeaning(tc.conditions)
			assert.Equal(t, tc.means, means)
			assert.Equal(t, tc.by, by)
		})
	}
	assert.Equal(t, StatusScopePolicy, rlp.StatusScope())
	assert.Equal(t, StatusScopeAncestors, btp.StatusScope())
}

// Gateway API's refusals (Accepted=False, whatever the reason) are refusals whatever they
// mean of where the policy applies; the row's own rules, and acceptance, never are.
func TestRefuses(t *testing.T) {
	rlp, _ := BuiltinKindTable().Lookup(schema.GroupKind{Group: "kuadrant.io", Kind: "RateLimitPolicy"})
	for name, tc := range map[string]struct {
		conditions []Condition
		want       bool
	}{
		"TargetNotFound":       {[]Condition{{Type: "Accepted", Status: "False", Reason: "TargetNotFound"}}, true},
		"Conflicted":           {[]Condition{{Type: "Accepted", Status: "False", Reason: "Conflicted"}}, true},
		"accepted":             {[]Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}, false},
		"the row's overridden": {[]Condition{{Type: "Accepted", Status: "True"}, {Type: "Enforced", Status: "False", Reason: "Overridden"}}, false},
		"nothing read":         {[]Condition{{Type: "ResolvedRefs", Status: "False"}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			_, by := rlp.StatusMeaning(tc.conditions)
			assert.Equal(t, tc.want, Refuses(by))
		})
	}
}

func TestStatusRuleAbsent(t *testing.T) {
	r := &KindRow{StatusConditions: StatusConditions{Rules: []StatusRule{
		{When: []ConditionMatch{{Type: "Accepted", Status: "True"}, {Type: "Programmed", Status: ConditionAbsent}}, Means: []string{MeansUnknown}},
	}}}
	means, _ := r.StatusMeaning([]Condition{{Type: "Accepted", Status: "True"}})
	assert.Equal(t, []string{MeansUnknown}, means, "not programmed yet")
	means, _ = r.StatusMeaning([]Condition{{Type: "Accepted", Status: "True"}, {Type: "Programmed", Status: "True"}})
	assert.Equal(t, GatewayAPIStatusRules[2].Means, means)
}

// A config file's statusConditions are checked at load, like every other row field.
func TestStatusConditionsValidated(t *testing.T) {
	err := NewKindTable().Load([]byte(`
kinds:
- group: example.com
  kind: BadPolicy
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  statusConditions:
    scope: everywhere
    rules:
    - when: []
      means: [Enforced, Refused]
    - when: [{type: Accepted, status: "Maybe"}]
      means: [Winning]
`), "test")
	require.Error(t, err)
	assert.Equal(t, `test: kinds[0]: kind example.com/BadPolicy: statusConditions.scope "everywhere" must be ancestors or policy; `+
		`statusConditions.rules[0].when must list at least one condition; statusConditions.rules[0].means: Refused and Unknown stand alone; `+
		`statusConditions.rules[1].when: status "Maybe" must be True, False, Unknown or Absent; `+
		`statusConditions.rules[1].means "Winning" must be one of Enforced, PartiallyEnforced, Overridden, NoTargets, or Refused, or Unknown`, err.Error())
}
