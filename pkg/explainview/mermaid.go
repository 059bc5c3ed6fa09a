package explainview

import (
	"fmt"
	"slices"
	"strings"
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
	for i, p := range g.Policies {
		fmt.Fprintf(&b, "  %s([\"%s<br/>%s<br/><i>%s</i>\"]):::%s\n", ids.policies[i],
			mermaidText(p.Kind), mermaidText(policyRef(p.Namespace, p.Name)), mermaidText(p.Status), statusClass(p.Status))
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

// mermaidText escapes s for a quoted Mermaid label: entity codes for the characters that
// would end the label or be read as markup.
func mermaidText(s string) string {
	r := strings.NewReplacer(`#`, `#35;`, `"`, `#quot;`, `<`, `#lt;`, `>`, `#gt;`, "\n", " ", "\r", "", "`", "#96;")
	return r.Replace(s)
}
