package explainview

import (
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Attachments finds where each policy of the explanation attaches on the explanation's
// paths, and with which stanza classes: the explain model names the policy behind each
// setting but not the point it attaches at. Only shown policies and shown paths are
// looked at.
func Attachments(snap topology.State, ex impact.Explanation) []Attachment {
	out, _ := attachments(snap, ex)
	return out
}

// attachments is Attachments, and for each shown policy the shown paths (indexes into
// ex.Paths) it attaches on: what the page highlights when the policy is selected.
func attachments(snap topology.State, ex impact.Explanation) ([]Attachment, map[policyKey][]int) {
	type ref struct{ kind, namespace, name string }
	shownPolicies := make(map[ref]bool, len(ex.Policies))
	for _, p := range ex.Policies {
		shownPolicies[ref{p.Kind, p.Namespace, p.Name}] = true
	}
	type pathRef struct{ kind, path string }
	shownPaths := make(map[pathRef]int, len(ex.Paths))
	for i, p := range ex.Paths {
		shownPaths[pathRef{p.Kind, strings.Join(p.Path, " > ")}] = i
	}
	var out []Attachment
	reach := map[policyKey][]int{}
	var keys [topology.MaxPathKeys]policy.TargetKey
	for _, p := range snap.Policies() {
		if !shownPolicies[ref{p.Row.Kind, p.Namespace, p.Name}] {
			continue
		}
		classes := stanzaClasses(p)
		for _, c := range topology.PathsOf(snap, p) {
			index, shown := shownPaths[pathRef{p.Row.Kind, c.String()}]
			if !shown {
				continue
			}
			ids := ElementIDs(c.Strings())
			attached := false
			for _, key := range c.AppendKeys(keys[:0]) {
				if !slices.Contains(snap.PoliciesAt(p.Row.GroupKind(), key), p) {
					continue
				}
				node, above, ok := nodeOf(key, c.Strings(), ids)
				if !ok {
					continue
				}
				attached = true
				for _, class := range classes {
					out = append(out, Attachment{Kind: p.Row.Kind, Namespace: p.Namespace, Name: p.Name, Node: node, Above: above, Class: class})
				}
			}
			if attached {
				k := policyKey{p.Row.Kind, p.Namespace, p.Name}
				reach[k] = append(reach[k], index)
			}
		}
	}
	for k, paths := range reach {
		slices.Sort(paths)
		reach[k] = slices.Compact(paths)
	}
	return out, reach
}

// stanzaClasses are the classes of a policy's rule blocks, defaults first; a policy with
// no rules attaches with none.
func stanzaClasses(p *policy.Policy) []string {
	var defaults, overrides bool
	for _, b := range p.Blocks() {
		if b.Class == policy.OverridesClass {
			overrides = true
		} else {
			defaults = true
		}
	}
	var out []string
	if defaults {
		out = append(out, string(policy.DefaultsClass))
	}
	if overrides {
		out = append(out, string(policy.OverridesClass))
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// nodeOf finds the node of an attachment point on a path (its elements and their IDs). A
// GatewayClass or Namespace is off the printed path: its node sits above the Gateway.
func nodeOf(key policy.TargetKey, elements, ids []string) (node, above string, ok bool) {
	if len(ids) == 0 {
		return "", "", false
	}
	switch {
	case key.Group == kinds.GatewayGroup && key.Kind == "GatewayClass":
		return "GatewayClass " + key.Name, ids[0], level(elements[0]) == "Gateway"
	case key.Group == kinds.CoreGroup && key.Kind == "Namespace":
		return "Namespace " + key.Name, ids[0], level(elements[0]) == "Gateway"
	}
	owner := key.Kind + " " + key.Namespace + "/" + key.Name
	if key.Namespace == "" {
		owner = key.Kind + " " + key.Name
	}
	i := slices.Index(ids, owner)
	if i < 0 {
		return "", "", false
	}
	if key.Section == "" {
		return owner, "", true
	}
	// The section is the element after its owner: "Listener https", "Rule checkout",
	// "Port 443".
	if i+1 < len(elements) && isSection(elements[i+1]) && strings.HasSuffix(elements[i+1], " "+key.Section) {
		return ids[i+1], "", true
	}
	return "", "", false
}
