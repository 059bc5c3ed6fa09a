package kinds

import (
	"fmt"
	"slices"
	"strings"
)

// StatusConditions says how to read what a kind's implementation writes into a policy's
// status, so `webhook audit`, `webhook report` and the periodic audit can compare it with
// the webhook's prediction for the same policy and ancestor. A row that sets none is read by
// Gateway API's PolicyAncestorStatus semantics (GatewayAPIStatusRules).
type StatusConditions struct {
	// Scope is where the implementation writes its conditions: ancestors (the default:
	// status.ancestors[], one entry per ancestor and controller, Gateway API's PolicyStatus,
	// with GEP-5058's per-target entries under each) or policy (status.conditions, one set
	// for the policy as a whole: Kuadrant).
	Scope string `json:"scope,omitempty"`
	// Controller names, in messages, the controller that writes a status of scope policy
	// (which, unlike an ancestor entry's controllerName, does not say).
	Controller string `json:"controller,omitempty"`
	// Rules are tried in order, after Gateway API's refusals and before its acceptance
	// (GatewayAPIStatusRules); the first whose conditions all hold gives the meaning of one
	// set of conditions.
	Rules []StatusRule `json:"rules,omitempty"`
}

// Where an implementation writes a policy's conditions.
const (
	StatusScopeAncestors = "ancestors"
	StatusScopePolicy    = "policy"
)

// StatusRule gives the meaning of a set of conditions in the webhook's terms.
type StatusRule struct {
	// When lists conditions that must all hold.
	When []ConditionMatch `json:"when"`
	// Means lists the impact statuses the conditions agree with (Enforced,
	// PartiallyEnforced, Overridden, NoTargets), or is [Refused] (the implementation applies
	// the policy nowhere here: only a denial by the webhook's rules agrees) or [Unknown]
	// (nothing to compare: the implementation is still working, or says something the
	// webhook does not model).
	Means []string `json:"means"`
}

// ConditionMatch matches one condition of a set by its type, and optionally its status,
// reason and a part of its message.
type ConditionMatch struct {
	Type string `json:"type"`
	// Status is True, False or Unknown; empty: any. Absent matches a set without the type.
	Status string `json:"status,omitempty"`
	// Reason, when set, must equal the condition's reason.
	Reason string `json:"reason,omitempty"`
	// MessageContains, when set, must be part of the condition's message (Kuadrant tells a
	// partly enforced policy from a fully enforced one by its message alone).
	MessageContains string `json:"messageContains,omitempty"`
}

// What a status rule may mean besides the impact statuses.
const (
	MeansRefused = "Refused"
	MeansUnknown = "Unknown"
	// ConditionAbsent is a ConditionMatch status: the set has no condition of the type.
	ConditionAbsent = "Absent"
)

// impactStatuses are the statuses a rule may say it agrees with (pkg/rules/impact's).
var impactStatuses = []string{"Enforced", "PartiallyEnforced", "Overridden", "NoTargets"}

// GatewayAPIStatusRules read a set of conditions as Gateway API defines them for every
// policy (apis/v1/policy_types.go at v1.6.3 and v1.7.0, PolicyConditionAccepted: "Possible
// reasons for this condition to be False are: Conflicted, Invalid, TargetNotFound"): refused
// as TargetNotFound, it applies nowhere (as a policy that reaches no path); refused otherwise,
// only a denial agrees; accepted, it says nothing of which policy wins where, so every
// impact status agrees. A row's own rules come between the refusals and the acceptance:
// whatever else an implementation writes, Accepted=False is a refusal.
var GatewayAPIStatusRules = append(gatewayAPIRefusals, gatewayAPIAcceptance)

var (
	gatewayAPIRefusals = []StatusRule{
		{When: []ConditionMatch{{Type: "Accepted", Status: "False", Reason: "TargetNotFound"}}, Means: []string{"NoTargets"}},
		{When: []ConditionMatch{{Type: "Accepted", Status: "False"}}, Means: []string{MeansRefused}},
	}
	gatewayAPIAcceptance = StatusRule{When: []ConditionMatch{{Type: "Accepted", Status: "True"}}, Means: impactStatuses}
)

// StatusScope is where the kind's implementation writes its conditions.
func (r *KindRow) StatusScope() string {
	if r.StatusConditions.Scope == "" {
		return StatusScopeAncestors
	}
	return r.StatusConditions.Scope
}

// Condition is one condition of a status, as the rules read it.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// StatusMeaning reads one set of conditions by Gateway API's refusals, the row's rules, then
// Gateway API's acceptance: the impact statuses it agrees with (or [Refused], or
// [Unknown]), and the conditions that decided it. A set no rule reads (no Accepted
// condition yet) means Unknown.
func (r *KindRow) StatusMeaning(conditions []Condition) (means []string, by []Condition) {
	for _, rules := range [][]StatusRule{gatewayAPIRefusals, r.StatusConditions.Rules, {gatewayAPIAcceptance}} {
		for _, rule := range rules {
			if by, ok := rule.matches(conditions); ok {
				return rule.Means, by
			}
		}
	}
	return []string{MeansUnknown}, nil
}

// Refuses reports whether the conditions that decided a meaning (StatusMeaning's by) are one
// of Gateway API's refusals (Accepted=False, whatever the reason, TargetNotFound included):
// the implementation applies the policy nowhere there, whatever the meaning says of where.
func Refuses(by []Condition) bool {
	for _, rule := range gatewayAPIRefusals {
		if _, ok := rule.matches(by); ok {
			return true
		}
	}
	return false
}

// matches reports whether every condition of the rule holds, and the conditions matched.
func (rule StatusRule) matches(conditions []Condition) ([]Condition, bool) {
	var by []Condition
	for _, m := range rule.When {
		i := slices.IndexFunc(conditions, func(c Condition) bool { return c.Type == m.Type })
		if m.Status == ConditionAbsent {
			if i >= 0 {
				return nil, false
			}
			continue
		}
		if i < 0 {
			return nil, false
		}
		c := conditions[i]
		if (m.Status != "" && c.Status != m.Status) || (m.Reason != "" && c.Reason != m.Reason) ||
			(m.MessageContains != "" && !strings.Contains(c.Message, m.MessageContains)) {
			return nil, false
		}
		by = append(by, c)
	}
	return by, true
}

// validateStatusConditions reports what cannot work in a row's statusConditions.
func validateStatusConditions(s StatusConditions) []string {
	var problems []string
	if s.Scope != "" && s.Scope != StatusScopeAncestors && s.Scope != StatusScopePolicy {
		problems = append(problems, fmt.Sprintf("statusConditions.scope %q must be ancestors or policy", s.Scope))
	}
	for i, rule := range s.Rules {
		if len(rule.When) == 0 {
			problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].when must list at least one condition", i))
		}
		for _, m := range rule.When {
			if m.Type == "" {
				problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].when: a condition needs its type", i))
			}
			if m.Status != "" && m.Status != "True" && m.Status != "False" && m.Status != "Unknown" && m.Status != ConditionAbsent {
				problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].when: status %q must be True, False, Unknown or Absent", i, m.Status))
			}
		}
		switch {
		case len(rule.Means) == 0:
			problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].means must list what the conditions mean", i))
		case slices.Contains(rule.Means, MeansRefused) || slices.Contains(rule.Means, MeansUnknown):
			if len(rule.Means) > 1 {
				problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].means: %s and %s stand alone", i, MeansRefused, MeansUnknown))
			}
		default:
			for _, m := range rule.Means {
				if !slices.Contains(impactStatuses, m) {
					problems = append(problems, fmt.Sprintf("statusConditions.rules[%d].means %q must be one of %s, or %s, or %s",
						i, m, strings.Join(impactStatuses, ", "), MeansRefused, MeansUnknown))
				}
			}
		}
	}
	return problems
}
