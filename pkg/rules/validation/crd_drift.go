package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WarningCRDDrift: the policy relies on a fact of its kind that the CRD the cluster runs
// admits and the webhook's built-in row, read at an older release, does not (a target kind,
// more target references, a version, a strategy field on another target kind, a reference
// kind). The API server has already judged the policy by that CRD; a row stricter than the
// installed release must not block the write, so it is admitted with this warning.
const WarningCRDDrift = "CRDDrift"

// WarnCRDDrift warns, never denies, about each place where the policy relies on a fact its
// row was widened to from the installed CRD (kinds.InstalledCRD): what the built-in row
// alone would have denied.
func WarnCRDDrift(p *policy.Policy) []string {
	installed := p.Row.Installed
	if installed == nil {
		return nil
	}
	base := installed.Base
	spec := field.NewPath("spec")
	var warnings []string
	warn := func(path *field.Path, what string) {
		warnings = append(warnings, fmt.Sprintf("%s: %s: the installed CRD %s admits %s, which the webhook's row of %s (%s) does not; judged by the installed CRD",
			WarningCRDDrift, path, installed.Name, what, p.Row.Kind, base.ReadAtPhrase()))
	}
	for _, d := range installed.Widened() {
		switch d.Fact {
		case kinds.FactVersions:
			if p.Version == d.Item {
				warn(field.NewPath("apiVersion"), "version "+d.Item)
			}
		case kinds.FactMaxTargetRefs:
			if len(p.TargetRefs) > base.MaxRefs() {
				warn(spec.Child("targetRefs"), fmt.Sprintf("%d target references (%s; the row: %s)", len(p.TargetRefs), d.CRD, d.Row))
			}
		case kinds.FactTargetKinds:
			for _, ref := range p.TargetRefs {
				if widenedTarget(p.Row, base, ref.Group, ref.Kind, d.Item) {
					warn(ref.Path.Child("kind"), "target kind "+policy.Echo(kinds.QualifiedKind(ref.Group, ref.Kind)))
				}
			}
			for _, sel := range p.TargetSelectors() {
				if widenedTarget(p.Row, base, sel.Group, sel.Kind, d.Item) {
					warn(sel.Path.Child("kind"), "target kind "+policy.Echo(kinds.QualifiedKind(sel.Group, sel.Kind)))
				}
			}
		case kinds.FactFieldTargetKinds:
			if !specHas(p.Spec(), d.Item) {
				continue
			}
			if k, outside := targetOutside(p, baseKinds(base, d.Item)); outside {
				warn(spec.Child(d.Item), fmt.Sprintf("`%s` on a policy that targets a %s", d.Item, policy.Echo(k)))
			}
		case kinds.FactReferenceKinds:
			path, kind, _ := strings.Cut(d.Item, " ")
			refs, _ := p.ObjectRefs()
			for _, ref := range refs {
				if ref.Spec.Path == path && ref.Kind == kind {
					warn(ref.Path.Child("kind"), "reference kind "+policy.Echo(kind))
				}
			}
		}
	}
	return warnings
}

// widenedTarget says a reference to group/kind is admitted by row only because the
// installed CRD widened it to item.
func widenedTarget(row, base *kinds.KindRow, group, kind, item string) bool {
	if kind != item {
		return false
	}
	_, derived := row.Target(group, kind)
	_, built := base.Target(group, kind)
	return derived && !built
}

// baseKinds are the target kinds the built-in row alone allows a policy that sets field.
func baseKinds(base *kinds.KindRow, field string) []string {
	ks, _ := base.FieldTargetKinds(field)
	return ks
}
