package validation

import (
	"fmt"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WarnMissingTargets warns, never denies, when a target or its section does not exist yet:
// `kubectl apply -f dir/` must not depend on the order of files. It also warns when the
// implementation acts on a target only from another namespace (warnOnlyFromNamespace), and
// when a section is a listener that loses a listener conflict (warnListenerConflicted).
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
		switch Missing(snap, target, key) {
		case WarningTargetNotFound:
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s not found; the policy takes effect once it exists",
				WarningTargetNotFound, ref.Path, key.Object().Shown()))
		case WarningSectionNotFound:
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s has no %s named %q; the policy takes effect once it does",
				WarningSectionNotFound, ref.Path.Child("sectionName"), key.Object().Shown(), target.Section.Noun(), policy.Echo(ref.SectionName)))
		default:
			if w, ok := warnListenerConflicted(p, ref, key, snap); ok {
				warnings = append(warnings, w)
			}
		}
	}
	for i := range p.TargetSelectors() {
		warnings = append(warnings, selectorWarnings(p, &p.TargetSelectors()[i], snap)...)
	}
	return warnings
}

// Missing says what of the target at key (a kind target of the policy's row) the snapshot
// lacks: WarningTargetNotFound (the object), WarningSectionNotFound (the section key names,
// where the object has sections and target lets a policy name one), or "" (both there, or a
// kind the webhook does not read from the cluster, whose absence says nothing).
func Missing(snap topology.Snapshot, target kinds.TargetKind, key policy.TargetKey) string {
	obj, found := snap.Object(key.Object())
	switch {
	case !found:
		if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind}); !info.Watched {
			return "" // the webhook does not read such objects from the cluster
		}
		return WarningTargetNotFound
	case key.Section != "" && obj.HasSections() && target.Section != kinds.NoSections && !obj.HasSection(key.Section):
		return WarningSectionNotFound
	}
	return ""
}

// selectorWarnings warns when a target selector selects nothing now, and when it selects
// objects in other namespaces without a ReferenceGrant (counted, not named: they belong to
// other tenants).
func selectorWarnings(p *policy.Policy, sel *policy.TargetSelector, snap topology.Snapshot) []string {
	target, _ := p.Row.Target(sel.Group, sel.Kind)
	checkSection := sel.SectionName != "" && target.Section != kinds.NoSections
	selected, ungranted := 0, map[string]int{}
	var withoutSection []*topology.Object
	for o, granted := range topology.Selected(snap, p, sel) {
		switch {
		case !granted:
			ungranted[o.Namespace]++
		default:
			selected++
			if checkSection && o.HasSections() && !o.HasSection(sel.SectionName) {
				withoutSection = append(withoutSection, o)
			}
		}
	}
	var warnings []string
	if w, ok := warnSelectorSectionIgnored(p, sel); ok {
		warnings = append(warnings, w)
	}
	if w, ok := selectedWithoutSection(p, sel, target, withoutSection); ok {
		warnings = append(warnings, w)
	}
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

// selectedWithoutSection is the SectionNotFound warning of a selector whose sectionName
// some selected objects lack (kgateway's and agentgateway's selectors carry one): the one
// a reference naming that object gets, or, for several, their count and those in the
// policy's own namespace by name (objects elsewhere belong to other tenants).
func selectedWithoutSection(p *policy.Policy, sel *policy.TargetSelector, target kinds.TargetKind, objs []*topology.Object) (string, bool) {
	path := sel.Path.Child("sectionName")
	noun, section := target.Section.Noun(), policy.Echo(sel.SectionName)
	switch {
	case len(objs) == 0:
		return "", false
	case len(objs) == 1 && objs[0].Namespace == p.Namespace:
		return fmt.Sprintf("%s: %s: %s has no %s named %q; the policy takes effect once it does",
			WarningSectionNotFound, path, objs[0].Key().Object().Shown(), noun, section), true
	}
	var own []string
	for _, o := range objs {
		if o.Namespace == p.Namespace {
			own = append(own, o.Namespace+"/"+policy.Echo(o.Name))
		}
	}
	sort.Strings(own)
	const named = 5
	if len(own) > named {
		own = append(own[:named], "...")
	}
	mine := ""
	if len(own) > 0 {
		mine = " (" + strings.Join(own, ", ") + ")"
	}
	return fmt.Sprintf("%s: %s: %d selected %s%s have no %s named %q; the policy takes effect on each once it does",
		WarningSectionNotFound, path, len(objs), plural(len(objs), policy.Echo(sel.Kind)), mine, noun, section), true
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
