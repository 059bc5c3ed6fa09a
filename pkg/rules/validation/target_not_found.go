package validation

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WarnMissingTargets warns, never denies, when a target or its section does not exist yet:
// `kubectl apply -f dir/` must not depend on the order of files. It also warns when the
// implementation acts on a target only from another namespace (warnOnlyFromNamespace).
func WarnMissingTargets(p *policy.Policy, snap topology.Snapshot) []string {
	var warnings []string
	for _, ref := range p.TargetRefs {
		target, ok := p.Row.Target(ref.Group, ref.Kind)
		if !ok || ref.Name == "" {
			continue
		}
		if w, ok := warnOnlyFromNamespace(p, ref, target); ok {
			warnings = append(warnings, w)
		}
		key := p.Key(ref)
		obj, found := snap.Object(key)
		if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}); !found && !info.Watched {
			continue // the webhook does not read such objects from the cluster: absence says nothing
		}
		if !found {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s not found; the policy takes effect once it exists",
				WarningTargetNotFound, ref.Path, key.Object().Shown()))
			continue
		}
		if ref.SectionName != "" && obj.HasSections() && target.Section != kinds.NoSections && !obj.HasSection(ref.SectionName) {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s has no %s named %q; the policy takes effect once it does",
				WarningSectionNotFound, ref.Path.Child("sectionName"), key.Object().Shown(), target.Section.Noun(), policy.Echo(ref.SectionName)))
		}
	}
	for i := range p.TargetSelectors() {
		warnings = append(warnings, selectorWarnings(p, &p.TargetSelectors()[i], snap)...)
	}
	return warnings
}

// selectorWarnings warns when a target selector selects nothing now, and when it selects
// objects in other namespaces without a ReferenceGrant (counted, not named: they belong to
// other tenants).
func selectorWarnings(p *policy.Policy, sel *policy.TargetSelector, snap topology.Snapshot) []string {
	selected, ungranted := 0, map[string]int{}
	for o, granted := range topology.Selected(snap, p, sel) {
		if granted {
			selected++
		} else {
			ungranted[o.Namespace]++
		}
	}
	var warnings []string
	if n := len(ungranted); n > 0 {
		count := 0
		for _, c := range ungranted {
			count += c
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s: selects %d %s in %d other %s that no ReferenceGrant lets %s from namespace %q reference; they are not targets",
			WarningSelectionNotPermitted, sel.Path, count, plural(count, policy.Echo(sel.Kind)), n, plural(n, "namespace"), p.Row.Kind, p.Namespace))
	}
	if selected == 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %s: selects no %s now; the policy takes effect on those whose labels match once they exist",
			WarningSelectsNothing, sel.Path, policy.Echo(sel.Kind)))
	}
	return warnings
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
