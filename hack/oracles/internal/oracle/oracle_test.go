package oracle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A seed and an index give the same scenario every time, and scenarios differ.
func TestGenerateIsReproducible(t *testing.T) {
	a, err := YAML(Generate(7, 3).Objects, Generate(7, 3).Policies)
	require.NoError(t, err)
	b, err := YAML(Generate(7, 3).Objects, Generate(7, 3).Policies)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	c, err := YAML(Generate(7, 4).Objects, Generate(7, 4).Policies)
	require.NoError(t, err)
	assert.NotEqual(t, string(a), string(c))
}

// Every policy the generator writes names a creationTimestamp, and mergeType only with
// route targets (Envoy Gateway's CRD refuses it elsewhere).
func TestGeneratedPoliciesAreValid(t *testing.T) {
	for i := range 200 {
		for _, p := range Generate(1, i).Policies {
			meta := p["metadata"].(Object)
			require.NotEmpty(t, meta["creationTimestamp"])
			spec := p["spec"].(Object)
			if _, ok := spec["mergeType"]; !ok {
				continue
			}
			refs, _ := spec["targetRefs"].([]any)
			for _, r := range refs {
				assert.Equal(t, "HTTPRoute", r.(Object)["kind"], "scenario %d %v", i, p)
			}
		}
	}
}

// egctl's output, as its gateway-api translation writes it (hand-written in its shape).
const translated = `
gatewayClass: {metadata: {name: eg}}
backendTrafficPolicies:
- kind: BackendTrafficPolicy
  metadata: {name: old, namespace: a}
  status:
    ancestors:
    - conditions:
      - {type: Accepted, status: "True", reason: Accepted, message: Policy has been accepted.}
      - {type: Overridden, status: "True", reason: Overridden, message: "This policy is being overridden by other backendTrafficPolicies for these routes: [a/r0]"}
- kind: BackendTrafficPolicy
  metadata: {name: young, namespace: a}
  status:
    ancestors:
    - conditions:
      - {type: Accepted, status: "False", reason: Conflicted, message: "Unable to target HTTPRoute r0, another BackendTrafficPolicy has already attached to it"}
- kind: BackendTrafficPolicy
  metadata: {name: nowhere, namespace: b}
  status: {ancestors: null}
`

func TestParseTranslation(t *testing.T) {
	got, err := ParseTranslation([]byte(translated))
	require.NoError(t, err)
	assert.Equal(t, map[string]EGStatus{
		"BackendTrafficPolicy a/old":     {Verdict: "Accepted", Overridden: true, OverriddenBy: "This policy is being overridden by other backendTrafficPolicies for these routes: [a/r0]\n"},
		"BackendTrafficPolicy a/young":   {Verdict: "Conflicted", Message: "Unable to target HTTPRoute r0, another BackendTrafficPolicy has already attached to it"},
		"BackendTrafficPolicy b/nowhere": {Verdict: "NoStatus"},
	}, got)
	assert.True(t, got["BackendTrafficPolicy a/young"].Refused())
	assert.False(t, got["BackendTrafficPolicy b/nowhere"].Refused())
}

// TranslatedStatuses keeps each status as written, by the same key as ParseTranslation.
func TestTranslatedStatuses(t *testing.T) {
	got, err := TranslatedStatuses([]byte(translated))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"BackendTrafficPolicy a/old": map[string]any{"ancestors": []any{map[string]any{"conditions": []any{
			map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "Policy has been accepted."},
			map[string]any{"type": "Overridden", "status": "True", "reason": "Overridden", "message": "This policy is being overridden by other backendTrafficPolicies for these routes: [a/r0]"},
		}}}},
		"BackendTrafficPolicy a/young": map[string]any{"ancestors": []any{map[string]any{"conditions": []any{
			map[string]any{"type": "Accepted", "status": "False", "reason": "Conflicted", "message": "Unable to target HTTPRoute r0, another BackendTrafficPolicy has already attached to it"},
		}}}},
		"BackendTrafficPolicy b/nowhere": map[string]any{"ancestors": nil},
	}, got)
}

// The report counts agreement, disagreement and what differs by design apart.
func TestReportClasses(t *testing.T) {
	s := &Scenario{Seed: 1, Index: 0, Policies: []Object{{}, {}, {}, {}}}
	r := NewReport()
	r.Add(&Outcome{Scenario: s, Verdicts: []Verdict{
		{Policy: "BackendTrafficPolicy a/p0", Shape: "HTTPRoute", Allowed: true, Status: "Enforced", EG: EGStatus{Verdict: "Accepted"}},
		{Policy: "BackendTrafficPolicy a/p1", Shape: "HTTPRoute", Allowed: false, Reasons: []string{"Conflicted"}, EG: EGStatus{Verdict: "Accepted"}},
		{Policy: "ClientTrafficPolicy a/p2", Shape: "Gateway/missing-section", Allowed: true, Warnings: []string{"SectionNotFound: ..."}, EG: EGStatus{Verdict: "TargetNotFound"}},
		{Policy: "BackendTrafficPolicy a/p3", Shape: "Gateway", Allowed: true, Status: "NoTargets", EG: EGStatus{Verdict: "Accepted", Overridden: true}},
	}})
	assert.Equal(t, 4, r.Verdicts.Judged)
	assert.Equal(t, 2, r.Verdicts.Agree)
	assert.Equal(t, 1, r.Verdicts.ByDesign)
	assert.Equal(t, 1, r.Verdicts.FalseDenials)
	assert.Equal(t, 2, r.Statuses.Judged)
	assert.Equal(t, 1, r.Statuses.Agree)
	assert.Equal(t, 1, r.Statuses.ByDesign)
	assert.Equal(t, map[string]int{designMissingSection: 1, designNoRoutes: 1}, r.ByDesign)
	require.Len(t, r.Classes, 1)
	assert.Contains(t, r.Classes, "false denial    BackendTrafficPolicy on HTTPRoute: ours denied Conflicted, EG Accepted")
	assert.Equal(t, "1 false denials, at most 0 allowed", r.Check(0, 0, 0))
}
