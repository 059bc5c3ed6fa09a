package index

import "k8s.io/apimachinery/pkg/runtime/schema"

// MayHoldPoliciesOf reports whether the snapshot may hold a policy of kind: false only when
// it has never held one. A review that looks at many attachment points (the deletion of a
// target: impact.TargetDeletionOf) skips the kinds it cannot find at any of them.
func (s *Snapshot) MayHoldPoliciesOf(kind schema.GroupKind) bool {
	return len(s.policies.byNamespace[kind]) > 0
}
