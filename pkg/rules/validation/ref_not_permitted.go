package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidateReferenceGrants denies a reference into another namespace (a target, or a
// reference field of the row) unless a ReferenceGrant in the referent's namespace admits
// it (GEP-713 "Cross namespace references"; GEP-709 ReferenceGrant semantics).
func ValidateReferenceGrants(p *policy.Policy, snap topology.Snapshot, _ *Messages) field.ErrorList {
	var errs field.ErrorList
	for _, ref := range p.TargetRefs {
		if !ref.HasNamespace || ref.Namespace == p.Namespace || !p.Row.CrossNamespaceTargets {
			continue // same namespace, or already an InvalidTargetRef for the row
		}
		if _, ok := p.Row.Target(ref.Group, ref.Kind); !ok || !namespacePattern.MatchString(ref.Namespace) {
			continue
		}
		if !topology.Granted(snap, p, ref.Namespace, ref.Group, ref.Kind, ref.Name) {
			errs = append(errs, notPermitted(p, ref.Path.Child("namespace"), ref.Namespace, ref.Kind, ref.Name))
		}
	}
	errs = append(errs, referenceFieldGrants(p, snap)...)
	return withReason(ReasonRefNotPermitted, errs...)
}

// ValidateReferenceFieldGrants denies a reference field of the row (not a target) into
// another namespace that its implementation follows only with a ReferenceGrant, where no
// grant admits it. The implementation refuses the whole policy for it (Envoy Gateway,
// NGINX Gateway Fabric: Accepted=False), so the impact of a stored one is none
// (impact.refused).
func ValidateReferenceFieldGrants(p *policy.Policy, snap topology.Snapshot) field.ErrorList {
	return withReason(ReasonRefNotPermitted, referenceFieldGrants(p, snap)...)
}

func referenceFieldGrants(p *policy.Policy, snap topology.Snapshot) field.ErrorList {
	if len(p.Row.References) == 0 {
		return nil
	}
	var errs field.ErrorList
	refs, _ := p.ObjectRefs()
	for _, ref := range refs {
		if !ref.HasNamespace || ref.Namespace == p.Namespace || ref.ClusterScoped || !ref.Spec.Namespaced || ref.Name == "" {
			continue
		}
		if !p.Row.GrantNeeded(ref.Spec) {
			continue // its implementation follows it without a grant (kinds.Reference.CrossNamespace, GrantModes)
		}
		if !topology.Granted(snap, p, ref.Namespace, ref.Group, ref.Kind, ref.Name) {
			e := notPermitted(p, ref.Path.Child("namespace"), ref.Namespace, ref.Kind, ref.Name)
			if mode := p.Row.GrantMode(ref.Spec); mode != "" {
				e.Detail += ", which " + mode + " requires"
			}
			errs = append(errs, e)
		}
	}
	return errs
}

func notPermitted(p *policy.Policy, path *field.Path, namespace, kind, name string) *field.Error {
	return field.Forbidden(path, fmt.Sprintf(
		"no ReferenceGrant in namespace %q lets %s from namespace %q reference %s %q",
		policy.Echo(namespace), p.Row.Kind, p.Namespace, policy.Echo(kind), policy.Echo(name)))
}
