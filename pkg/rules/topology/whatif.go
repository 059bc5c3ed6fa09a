package topology

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WithPolicy is a read-only view of a snapshot in which p is stored (replacing any stored
// version of it), for predicting p's impact before it is admitted. Nothing is copied.
func WithPolicy(snap Snapshot, p *policy.Policy) Snapshot {
	keys := map[policy.TargetKey]bool{}
	for _, k := range TargetKeys(snap, p) {
		keys[k] = true
	}
	return &withPolicy{Snapshot: snap, p: p, keys: keys}
}

type withPolicy struct {
	Snapshot
	p    *policy.Policy
	keys map[policy.TargetKey]bool
}

// PoliciesAt returns the base policies at key, without p's stored version, plus p.
func (w *withPolicy) PoliciesAt(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy {
	return w.replace(kind, w.Snapshot.PoliciesAt(kind, key), w.keys[key])
}

// SelectingPolicies returns the base's, without p's stored version, plus p if it selects.
func (w *withPolicy) SelectingPolicies(kind schema.GroupKind) []*policy.Policy {
	return w.replace(kind, w.Snapshot.SelectingPolicies(kind), len(w.p.TargetSelectors()) > 0)
}

// replace returns base (a list of policies of kind) without p's stored version, and with
// p when include says so.
func (w *withPolicy) replace(kind schema.GroupKind, base []*policy.Policy, include bool) []*policy.Policy {
	if kind != w.p.GroupKind() {
		return base
	}
	out := make([]*policy.Policy, 0, len(base)+1)
	for _, q := range base {
		if q.Namespace != w.p.Namespace || q.Name != w.p.Name {
			out = append(out, q)
		}
	}
	if include {
		out = append(out, w.p)
	}
	return out
}
