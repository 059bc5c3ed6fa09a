package topology

import "github.com/policyattachment/webhook/pkg/rules/policy"

// Granted reports whether a ReferenceGrant in the referent's namespace admits policy p
// (from: its group, kind and namespace) to reference group/kind/name (to: group and kind,
// and name when the grant names one).
func Granted(snap Snapshot, p *policy.Policy, namespace, group, kind, name string) bool {
	return grantAdmits(snap, p.Row.Group, p.Row.Kind, p.Namespace, policy.TargetKey{Group: group, Kind: kind, Namespace: namespace, Name: name})
}

// grantAdmits reports whether a ReferenceGrant in the referent's namespace admits a
// reference from objects of fromGroup/fromKind in fromNamespace to the referent.
func grantAdmits(snap Snapshot, fromGroup, fromKind, fromNamespace string, to policy.TargetKey) bool {
	for _, g := range snap.ReferenceGrants(to.Namespace) {
		fromOK := false
		for _, f := range g.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNamespace {
				fromOK = true
				break
			}
		}
		if !fromOK {
			continue
		}
		for _, t := range g.Spec.To {
			if string(t.Group) == to.Group && string(t.Kind) == to.Kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
				return true
			}
		}
	}
	return false
}
