package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// warnMissingTargets warns, never denies, when a target or its section does not exist yet:
// `kubectl apply -f dir/` must not depend on the order of files.
func warnMissingTargets(req *Request, snap Snapshot) (field.ErrorList, []string) {
	p := req.Policy
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
		if ref.SectionName != "" && obj.HasSections() && target.Section != NoSections && !obj.HasSection(ref.SectionName) {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s has no %s named %q; the policy takes effect once it does",
				WarningSectionNotFound, ref.Path.Child("sectionName"), key.Object(), sectionNoun(target.Section), ref.SectionName))
		}
	}
	return nil, warnings
}
