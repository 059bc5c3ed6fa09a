package topology

import (
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// NamespaceLabels returns the labels of a namespace as the snapshot knows them, always
// including kubernetes.io/metadata.name (the API server sets it on every namespace).
func NamespaceLabels(snap Snapshot, namespace string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": namespace}
	if obj, ok := snap.Object(policy.TargetKey{Group: kinds.CoreGroup, Kind: "Namespace", Name: namespace}); ok {
		for k, v := range obj.Labels().All() {
			out[k] = v
		}
	}
	return out
}
