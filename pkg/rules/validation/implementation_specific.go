package validation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WarningImplementationSpecific: the policy names a target kind or a reference kind that the
// kind's CRD accepts and the spec leaves to implementations. Whether it takes effect depends
// on the implementation the cluster runs, which the webhook cannot see, so it is admitted
// with a warning rather than denied.
const WarningImplementationSpecific = "ImplementationSpecific"

// WarnImplementationSpecific warns, never denies, about each target reference of a kind
// outside the row's targets where the row says other kinds are implementation-specific, and
// each reference field naming a kind outside its list where the row says the same of it.
func WarnImplementationSpecific(p *policy.Policy) []string {
	var warnings []string
	row := p.Row
	if row.OtherTargetsImplementationSpecific {
		for _, ref := range p.TargetRefs {
			if _, ok := row.Target(ref.Group, ref.Kind); ok || ref.Kind == "" || !kindPattern.MatchString(ref.Kind) || !groupPattern.MatchString(ref.Group) {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("%s: %s: every implementation of %s supports %s; %s is implementation-specific, so the policy takes effect only where yours supports it",
				WarningImplementationSpecific, ref.Path.Child("kind"), row.Kind, strings.Join(row.TargetKinds(), ", "), policy.Echo(kinds.QualifiedKind(ref.Group, ref.Kind))))
		}
	}
	if !slices.ContainsFunc(row.References, func(r kinds.Reference) bool { return r.OtherKindsImplementationSpecific }) {
		return warnings // no decoding of references on a review that cannot warn about one
	}
	refs, _ := p.ObjectRefs()
	for _, ref := range refs {
		if !ref.Spec.OtherKindsImplementationSpecific || ref.Kind == "" || len(ref.Spec.Kinds) == 0 || slices.Contains(ref.Spec.Kinds, ref.Kind) {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s: %s is not one of the kinds checked here (%s) but is left to implementations, so the reference resolves only where yours supports it",
			WarningImplementationSpecific, ref.Path.Child("kind"), policy.Echo(ref.Kind), strings.Join(ref.Spec.Kinds, ", ")))
	}
	return warnings
}
