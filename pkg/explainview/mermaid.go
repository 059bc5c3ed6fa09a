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
	d := drawingOf(g)
	b.WriteString("%% webhook explain -o mermaid\n")
	b.WriteString("flowchart LR\n")
	for _, n := range d.nodes {
		fmt.Fprintf(&b, "  %s[\"%s\"]:::point\n", n.id, mermaidText(n.Label))
	}
	for _, e := range d.edges {
		fmt.Fprintf(&b, "  %s --> %s\n", e[0], e[1])
	}
	for _, p := range d.attached {
		b.WriteString("  " + mermaidPolicy(p) + "\n")
	}
	if len(d.unattached) > 0 {
		b.WriteString("  subgraph unattached[\"on no path shown\"]\n")
		b.WriteString("    direction TB\n")
		for _, p := range d.unattached {
			b.WriteString("    " + mermaidPolicy(p) + "\n")
		}
		b.WriteString("  end\n")
	}
	for _, a := range d.arrows {
		switch a.class {
		case "overrides":
			fmt.Fprintf(&b, "  %s == overrides ==> %s\n", a.from, a.to)
		case "defaults":
			fmt.Fprintf(&b, "  %s -. defaults .-> %s\n", a.from, a.to)
		default:
			fmt.Fprintf(&b, "  %s -.-> %s\n", a.from, a.to)
		}
	}
	b.WriteString("  subgraph legend[\"impact status\"]\n")
	b.WriteString("    direction TB\n")
	for i, s := range Statuses {
		fmt.Fprintf(&b, "    legend%d([\"%s\"]):::%s\n", i, s, statusClass(s))
	}
	b.WriteString("  end\n")
	b.WriteString("  style legend fill:#ffffff,stroke:#b0bec5\n")
	if len(d.unattached) > 0 {
		b.WriteString("  style unattached fill:#fafafa,stroke:#b0bec5,stroke-dasharray:4 3\n")
	}
	h := hierarchyColors
	fmt.Fprintf(&b, "  classDef point fill:%s,stroke:%s,color:%s\n", h.Fill, h.Stroke, h.Text)
	for _, s := range slices.Concat(Statuses, []string{"other"}) {
		c := colorsOf(s)
		extra := ""
		if takesNoEffect(s) {
			extra = ",stroke-dasharray:4 3"
		}
		fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s,color:%s%s\n", statusClass(s), c.Fill, c.Stroke, c.Text, extra)
	}
	return []byte(b.String())
}

// mermaidPolicy is a policy's node: a stadium of its status's class.
func mermaidPolicy(p drawnPolicy) string {
	return fmt.Sprintf("%s([\"%s<br/>%s<br/><i>%s</i>\"]):::%s", p.id,
		mermaidText(p.Kind), mermaidText(policyRef(p.Namespace, p.Name)), mermaidText(p.Status), statusClass(p.Status))
}

// mermaidText escapes s for a quoted Mermaid label: entity codes for the characters that
// would end the label or be read as markup.
func mermaidText(s string) string {
	r := strings.NewReplacer(`#`, `#35;`, `"`, `#quot;`, `<`, `#lt;`, `>`, `#gt;`, "\n", " ", "\r", "", "`", "#96;")
	return r.Replace(s)
}
