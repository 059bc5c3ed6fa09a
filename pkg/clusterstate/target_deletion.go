package clusterstate

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// TargetDeletionVerdict is the review of deleting one target object (impact.TargetDeletion),
// worded for someone deleting in its namespace.
type TargetDeletionVerdict struct {
	// Reviewed is false for a kind whose deletion is not reviewed (a Service, unless the
	// config asks); nothing else is set then.
	Reviewed bool
	// Mode is the config's targetDeletions mode for the target's kind and namespace, and the
	// requester (rules.Config.TargetDeletionMode).
	Mode rules.Mode
	// Warnings say what the deletion does (none when it changes nothing); Refusal is the
	// message of a refusal, set when it changes something.
	Warnings []string
	Refusal  string
	// Policies counts the policies the deletion affects.
	Policies int
}

// TargetDeletion reviews the deletion by user of the object of kind gk at namespace/name
// against the store as it is now.
func (s *Store) TargetDeletion(gk schema.GroupKind, namespace, name, user string) TargetDeletionVerdict {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.config.ReviewsDeletionOf(gk) {
		return TargetDeletionVerdict{}
	}
	key := policy.TargetKey{Group: gk.Group, Kind: gk.Kind, Namespace: namespace, Name: name}
	v := TargetDeletionVerdict{Reviewed: true,
		Mode: s.config.TargetDeletionMode(gk, topology.NamespaceLabels(s.snap, namespace), user)}
	d := impact.TargetDeletionOf(s.snap, s.table, key)
	if d.Empty() {
		return v
	}
	msgs := s.messages()
	v.Warnings, v.Refusal, v.Policies = d.Warnings(msgs), d.Refusal(msgs), d.Policies()
	return v
}
