package impact

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Deletions are always allowed (a webhook must never trap a platform team with its own
// objects); the warning says what the deletion will affect, answering GEP-713's "how many
// things does this Policy affect?" before it is too late.

// WarningDeleteImpact prefixes the warnings about deletions.
const WarningDeleteImpact = "DeleteImpact"

// PolicyDeletionWarning describes what deleting a stored policy removes.
func PolicyDeletionWarning(snap topology.Snapshot, p *policy.Policy) string {
	paths := topology.PathsOf(snap, p)
	what := strings.ToLower(describeStrategy(p))
	if len(paths) == 0 {
		return fmt.Sprintf("%s: deleting %s %s removes %s that reach no paths", WarningDeleteImpact, p.Row.Kind, p.Ref(), what)
	}
	im := Of(snap, p, nil)
	return fmt.Sprintf("%s: deleting %s %s removes %s from %d %s in %d %s; it is enforced on %d of them",
		WarningDeleteImpact, p.Row.Kind, p.Ref(), what, len(paths), pathNoun(p.Row, len(paths)),
		countNamespaces(paths), plural(countNamespaces(paths), "namespace", "namespaces"), im.Enforced+im.PartiallyEnforced)
}

// countNamespaces counts the namespaces of the effective targets of paths.
func countNamespaces(paths []topology.ContextPath) int {
	seen := map[string]bool{}
	for _, c := range paths {
		switch {
		case c.End() >= kinds.DepthBackend:
			seen[c.Backend.Namespace] = true
		case c.Route != nil:
			seen[c.Route.Namespace] = true
		case c.Gateway != nil:
			seen[c.Gateway.Namespace] = true
		}
	}
	return len(seen)
}

// GrantDependents returns the stored policies whose cross-namespace references only the
// given ReferenceGrant admits. It looks only at the policies the grant's `from` names.
func GrantDependents(snap topology.Snapshot, table *kinds.KindTable, grant *gatewayv1.ReferenceGrant) []*policy.Policy {
	without := &withoutGrant{Snapshot: snap, namespace: grant.Namespace, name: grant.Name}
	var out []*policy.Policy
	for _, from := range grant.Spec.From {
		row, ok := table.Lookup(schema.GroupKind{Group: string(from.Group), Kind: string(from.Kind)})
		if !ok {
			continue
		}
		for _, p := range snap.PoliciesIn(row.GroupKind(), string(from.Namespace)) {
			if dependsOn(snap, without, p, grant.Namespace) {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref() < out[j].Ref() })
	return out
}

// dependsOn reports whether some reference of p into namespace is admitted with the grant
// and not without it.
func dependsOn(with, without topology.Snapshot, p *policy.Policy, namespace string) bool {
	check := func(group, kind, name string) bool {
		return topology.Granted(with, p, namespace, group, kind, name) && !topology.Granted(without, p, namespace, group, kind, name)
	}
	for _, ref := range p.TargetRefs {
		if ref.HasNamespace && ref.Namespace == namespace && namespace != p.Namespace && check(ref.Group, ref.Kind, ref.Name) {
			return true
		}
	}
	refs, _ := p.ObjectRefs()
	for _, ref := range refs {
		// A reference its implementation follows without a grant (or in the policy's own
		// namespace whatever it names) loses nothing with it.
		if ref.HasNamespace && ref.Namespace == namespace && namespace != p.Namespace && p.Row.GrantNeeded(ref.Spec) && check(ref.Group, ref.Kind, ref.Name) {
			return true
		}
	}
	if namespace == p.Namespace {
		return false
	}
	for i := range p.TargetSelectors() {
		for o := range topology.Selected(with, p, &p.TargetSelectors()[i]) {
			if o.Namespace == namespace && check(o.Group, o.Kind, o.Name) {
				return true
			}
		}
	}
	return false
}

// GrantDeletionWarning describes what deleting a ReferenceGrant breaks; empty if nothing.
// The dependents live in other namespaces by definition, so msgs decides whether they
// are named or only counted by namespace.
func GrantDeletionWarning(snap topology.Snapshot, table *kinds.KindTable, msgs *validation.Messages, grant *gatewayv1.ReferenceGrant) string {
	deps := GrantDependents(snap, table, grant)
	if len(deps) == 0 {
		return ""
	}
	// deps are sorted by namespace/name, so the policies a hidden name collapses together
	// are adjacent: "a ColorPolicy in namespace "a" (2 policies)".
	var names []string
	count := 0
	for i, p := range deps {
		name := msgs.Name(p.Row.Kind, p.Namespace, p.Name, grant.Namespace)
		count++
		if i+1 < len(deps) && msgs.Name(deps[i+1].Row.Kind, deps[i+1].Namespace, deps[i+1].Name, grant.Namespace) == name {
			continue
		}
		if count > 1 {
			name = fmt.Sprintf("%s (%d policies)", name, count)
		}
		names = append(names, name)
		count = 0
	}
	return fmt.Sprintf("%s: deleting ReferenceGrant %s/%s withdraws the cross-namespace reference %d accepted %s %s on: %s; "+
		"controllers may stop enforcing %s and the next update of %s will be denied",
		WarningDeleteImpact, grant.Namespace, grant.Name, len(deps), plural(len(deps), "policy", "policies"),
		plural(len(deps), "relies", "rely"), strings.Join(names, ", "), plural(len(deps), "it", "them"), plural(len(deps), "it", "each"))
}

// withoutGrant hides one ReferenceGrant.
type withoutGrant struct {
	topology.Snapshot
	namespace, name string
}

func (w *withoutGrant) ReferenceGrants(namespace string) []*gatewayv1.ReferenceGrant {
	all := w.Snapshot.ReferenceGrants(namespace)
	if namespace != w.namespace {
		return all
	}
	out := make([]*gatewayv1.ReferenceGrant, 0, len(all))
	for _, g := range all {
		if g.Name != w.name {
			out = append(out, g)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
