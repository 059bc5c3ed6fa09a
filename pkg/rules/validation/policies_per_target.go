package validation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidatePoliciesPerTarget denies, for a kind whose row sets MaxPoliciesPerTarget, a policy
// at a target object that already has that many older policies of the kind, whatever the
// sections they name: the implementation refuses the later ones (kube-agentic-networking
// v0.1.0 pkg/controller/accesspolicy.go isPolicyUnderTargetLimit: LimitPerTargetExceeded).
// Older is creationTimestamp, then name; a CREATE is younger than every stored policy. A
// target that does not exist yet is not judged (present).
//
// A row's OnePerTargetWhen also allows one policy per target object whose field holds one of
// its values: a younger one so valued is refused (kube-agentic-networking's ExternalAuth).
func ValidatePoliciesPerTarget(p *policy.Policy, snap topology.Snapshot, msgs *Messages) field.ErrorList {
	limit := p.Row.MaxPoliciesPerTarget
	exclusive := p.Row.OnePerTargetWhen
	if exclusive != nil && !holds(p, exclusive) {
		exclusive = nil
	}
	if limit <= 0 && exclusive == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[policy.TargetKey]bool{}
	for _, t := range topology.Targets(snap, p) {
		obj := t.Key.Object()
		if obj.Name == "" || seen[obj] || !present(snap, obj) || !servedAt(snap, p, obj) {
			continue
		}
		seen[obj] = true
		var older, olderExclusive []string
		for _, q := range snap.PoliciesIn(p.GroupKind(), obj.Namespace) {
			if (q.Namespace == p.Namespace && q.Name == p.Name) || !(p.Created.IsZero() || q.Higher(p)) || !names(snap, q, obj) {
				continue
			}
			name := msgs.Name(q.Row.Kind, q.Namespace, q.Name, p.Namespace)
			older = append(older, name)
			if exclusive != nil && holds(q, exclusive) {
				olderExclusive = append(olderExclusive, name)
			}
		}
		if len(olderExclusive) > 0 {
			errs = append(errs, field.Forbidden(t.Path, fmt.Sprintf(
				"%s already has %s with %s %s; the implementation accepts one such %s per target and refuses the later ones",
				msgs.Target(obj, t.Selected, p.Namespace), olderExclusive[0], exclusive.Field, policy.Echo(fmt.Sprint(p.Spec()[exclusive.Field])), p.Row.Kind)))
			continue
		}
		if limit <= 0 || len(older) < limit {
			continue
		}
		shown := older
		if len(shown) > limit {
			shown = append(shown[:limit:limit], fmt.Sprintf("%d more", len(older)-limit))
		}
		errs = append(errs, field.Forbidden(t.Path, fmt.Sprintf(
			"%s already has %d older policies of its kind (%s); the implementation accepts at most %d %s per target and refuses the later ones",
			msgs.Target(obj, t.Selected, p.Namespace), len(older), strings.Join(shown, ", "), limit, p.Row.Kind)))
	}
	return withReason(ReasonConflicted, errs...)
}

// holds reports whether p's spec field holds one of the values.
func holds(p *policy.Policy, fv *kinds.FieldValues) bool {
	v, ok := p.Spec()[fv.Field].(string)
	return ok && slices.Contains(fv.Values, v)
}

// names reports whether policy q attaches to obj (through any section of it).
func names(snap topology.Snapshot, q *policy.Policy, obj policy.TargetKey) bool {
	for _, t := range topology.Targets(snap, q) {
		if t.Key.Object() == obj {
			return true
		}
	}
	return false
}
