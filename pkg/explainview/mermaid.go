package explainview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// Mermaid renders the graph as a Mermaid flowchart (GitHub and GitLab draw it in a
// ```mermaid block): the same picture as DOT, policies as stadiums of their status's
// class, defaults as dotted arrows and overrides as thick ones.
func Mermaid(g Graph) []byte {
	var b strings.Builder
	ids := graphIDs(g)
	b.WriteString("%% webhook explain -o mermaid\n")
	b.WriteString("flowchart LR\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %s[\"%s\"]:::point\n", ids.node[n.ID], mermaidText(n.Label))
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s --> %s\n", ids.node[e.From], ids.node[e.To])
	}
	unattached := g.Unattached()
	for i, p := range g.Policies {
		if !slices.Contains(unattached, i) {
			b.WriteString("  " + mermaidPolicy(ids.policies[i], p) + "\n")
		}
	}
	if len(unattached) > 0 {
		b.WriteString("  subgraph unattached[\"on no path shown\"]\n")
		b.WriteString("    direction TB\n")
		for _, i := range unattached {
			b.WriteString("    " + mermaidPolicy(ids.policies[i], g.Policies[i]) + "\n")
		}
		b.WriteString("  end\n")
	}
	for _, a := range g.Attachments {
		from, ok := ids.policy[policyKey{a.Kind, a.Namespace, a.Name}]
		if !ok {
			continue
		}
		to := ids.node[a.Node]
		switch a.Class {
		case "overrides":
			fmt.Fprintf(&b, "  %s == overrides ==> %s\n", from, to)
		case "defaults":
			fmt.Fprintf(&b, "  %s -. defaults .-> %s\n", from, to)
		default:
			fmt.Fprintf(&b, "  %s -.-> %s\n", from, to)
		}
	}
	b.WriteString("  subgraph legend[\"impact status\"]\n")
	b.WriteString("    direction TB\n")
	for i, s := range Statuses {
		fmt.Fprintf(&b, "    legend%d([\"%s\"]):::%s\n", i, s, statusClass(s))
	}
	b.WriteString("  end\n")
	b.WriteString("  style legend fill:#ffffff,stroke:#b0bec5\n")
	if len(unattached) > 0 {
		b.WriteString("  style unattached fill:#fafafa,stroke:#b0bec5,stroke-dasharray:4 3\n")
	}
	h := hierarchyColors
	fmt.Fprintf(&b, "  classDef point fill:%s,stroke:%s,color:%s\n", h.Fill, h.Stroke, h.Text)
	for _, s := range slices.Concat(Statuses, []string{"other"}) {
		c := colorsOf(s)
		extra := ""
		if s == "NoTargets" {
			extra = ",stroke-dasharray:4 3"
		}
		fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s,color:%s%s\n", statusClass(s), c.Fill, c.Stroke, c.Text, extra)
	}
	return []byte(b.String())
}

// mermaidPolicy is a policy's node: a stadium of its status's class.
func mermaidPolicy(id string, p impact.PolicyStatus) string {
	return fmt.Sprintf("%s([\"%s<br/>%s<br/><i>%s</i>\"]):::%s", id,
		mermaidText(p.Kind), mermaidText(policyRef(p.Namespace, p.Name)), mermaidText(p.Status), statusClass(p.Status))
}

// mermaidText escapes s for a quoted Mermaid label: entity codes for the characters that
// would end the label or be read as markup.
func mermaidText(s string) string {
	r := strings.NewReplacer(`#`, `#35;`, `"`, `#quot;`, `<`, `#lt;`, `>`, `#gt;`, "\n", " ", "\r", "", "`", "#96;")
	return r.Replace(s)
}
