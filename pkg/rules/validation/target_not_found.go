package validation

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// WarnMissingTargets warns, never denies, when a target or its section does not exist yet:
// `kubectl apply -f dir/` must not depend on the order of files.
func WarnMissingTargets(p *policy.Policy, snap topology.Snapshot) []string {
	var warnings []string
	for _, ref := range p.TargetRefs {
		target, ok := p.Row.Target(ref.Group, ref.Kind)
		if !ok || ref.Name == "" {
			continue
		}
		key := p.Key(ref)
		obj, found := snap.Object(key)
		if !found {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s not found; the policy takes effect once it exists",
				WarningTargetNotFound, ref.Path, key.Object()))
			continue
		}
		if ref.SectionName != "" && obj.HasSections() && target.Section != kinds.NoSections && !obj.HasSection(ref.SectionName) {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s has no %s named %q; the policy takes effect once it does",
				WarningSectionNotFound, ref.Path.Child("sectionName"), key.Object(), target.Section.Noun(), ref.SectionName))
		}
	}
	if p.HasTargetSelectors() && p.Row.HasTargetRefField("targetSelectors") {
		warnings = append(warnings, WarningSelectorNotResolved+": spec.targetSelectors: this webhook does not resolve label selectors yet, "+
			"so conflicts and impact through the objects they select are not checked; targetRefs are")
	}
	return warnings
}
