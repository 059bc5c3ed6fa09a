package topology

import (
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Granted reports whether a ReferenceGrant in the referent's namespace admits policy p
// (from: its group, kind and namespace) to reference group/kind/name (to: group and kind,
// and name when the grant names one), as p's implementations read grants (a spelling of
// the core group they read as "" is "": NGINX Gateway Fabric's and kgateway's "core").
func Granted(snap Snapshot, p *policy.Policy, namespace, group, kind, name string) bool {
	return grantAdmits(snap, p.Row.Group, p.Row.Kind, p.Namespace, policy.TargetKey{Group: group, Kind: kind, Namespace: namespace, Name: name}, p.Row)
}

// grantAdmits reports whether a ReferenceGrant in the referent's namespace admits a
// reference from objects of fromGroup/fromKind in fromNamespace to the referent. reading,
// when set, is the row whose implementations' reading of grant groups applies; nil reads
// them as written (Gateway API's own references: a route's backendRefs).
func grantAdmits(snap Snapshot, fromGroup, fromKind, fromNamespace string, to policy.TargetKey, reading *kinds.KindRow) bool {
	group := func(g string) string {
		if reading == nil {
			return g
		}
		return reading.GrantCoreGroup(g)
	}
	toGroup := group(to.Group)
	for _, g := range snap.ReferenceGrants(to.Namespace) {
		fromOK := false
		for _, f := range g.Spec.From {
			if group(string(f.Group)) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNamespace {
				fromOK = true
				break
			}
		}
		if !fromOK {
			continue
		}
		for _, t := range g.Spec.To {
			if group(string(t.Group)) == toGroup && string(t.Kind) == to.Kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
				return true
			}
		}
	}
	return false
}
