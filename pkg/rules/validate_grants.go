package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateReferenceGrants denies a reference into another namespace (a target, or a
// reference field of the row) unless a ReferenceGrant in the referent's namespace admits
// it (GEP-713 "Cross namespace references"; GEP-709 ReferenceGrant semantics).
func validateReferenceGrants(req *Request, snap Snapshot) (field.ErrorList, []string) {
	p := req.Policy
	var errs field.ErrorList
	for _, ref := range p.TargetRefs {
		if !ref.HasNamespace || ref.Namespace == p.Namespace || !p.Row.CrossNamespaceTargets {
			continue // same namespace, or already an InvalidTargetRef for the row
		}
		if _, ok := p.Row.Target(ref.Group, ref.Kind); !ok || !namespacePattern.MatchString(ref.Namespace) {
			continue
		}
		if !Granted(snap, p, ref.Namespace, ref.Group, ref.Kind, ref.Name) {
			errs = append(errs, notPermitted(p, ref.Path.Child("namespace"), ref.Namespace, ref.Kind, ref.Name))
		}
	}
	refs, _ := p.ObjectRefs()
	for _, ref := range refs {
		if !ref.HasNamespace || ref.Namespace == p.Namespace || ref.ClusterScoped || !ref.Spec.Namespaced || ref.Name == "" {
			continue
		}
		if !Granted(snap, p, ref.Namespace, ref.Group, ref.Kind, ref.Name) {
			errs = append(errs, notPermitted(p, ref.Path.Child("namespace"), ref.Namespace, ref.Kind, ref.Name))
		}
	}
	return withReason(ReasonRefNotPermitted, errs...), nil
}

func notPermitted(p *Policy, path *field.Path, namespace, kind, name string) *field.Error {
	return field.Forbidden(path, fmt.Sprintf(
		"no ReferenceGrant in namespace %q lets %s from namespace %q reference %s %q",
		namespace, p.Row.Kind, p.Namespace, kind, name))
}

// Granted reports whether a ReferenceGrant in the referent's namespace admits policy p
// (from: its group, kind and namespace) to reference group/kind/name (to: group and kind,
// and name when the grant names one).
func Granted(snap Snapshot, p *Policy, namespace, group, kind, name string) bool {
	return grantAdmits(snap, p.Row.Group, p.Row.Kind, p.Namespace, TargetKey{Group: group, Kind: kind, Namespace: namespace, Name: name})
}

// grantAdmits reports whether a ReferenceGrant in the referent's namespace admits a
// reference from objects of fromGroup/fromKind in fromNamespace to the referent.
func grantAdmits(snap Snapshot, fromGroup, fromKind, fromNamespace string, to TargetKey) bool {
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
