package explainview

import (
	"fmt"
	"strings"
)

// DOT renders the graph in Graphviz's language (`dot -Tsvg`): attachment points as boxes
// joined down the hierarchy, in the page's layout order with its columns as ranks, each policy a note filled with its status's colour, and an
// arrow from it to each point it attaches at, dashed for defaults, bold for overrides.
func DOT(g Graph) []byte {
	var b strings.Builder
	d := drawingOf(g)
	b.WriteString("// webhook explain -o dot: render with `dot -Tsvg -o explain.svg`\n")
	b.WriteString("digraph explain {\n")
	b.WriteString("  rankdir=LR;\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9, color=\"#546e7a\"];\n")
	h := hierarchyColors
	for _, n := range d.nodes {
		fmt.Fprintf(&b, "  %s [label=%s, shape=box, style=\"rounded,filled\", fillcolor=%q, color=%q, fontcolor=%q];\n",
			n.id, dotString(n.Label), h.Fill, h.Stroke, h.Text)
	}
	for _, e := range d.edges {
		fmt.Fprintf(&b, "  %s -> %s;\n", e[0], e[1])
	}
	// The page's columns: one rank per level, so Graphviz puts every route in one column
	// as the page does, whichever path reaches it.
	for _, r := range d.ranks() {
		fmt.Fprintf(&b, "  { rank=same; %s; }\n", strings.Join(r, "; "))
	}
	for _, p := range d.attached {
		b.WriteString("  " + dotPolicy(p) + "\n")
	}
	if len(d.unattached) > 0 {
		b.WriteString("  subgraph cluster_unattached {\n")
		b.WriteString("    label=\"on no path shown\"; fontname=\"Helvetica\"; fontsize=10; color=\"#b0bec5\"; style=dashed;\n")
		for _, p := range d.unattached {
			b.WriteString("    " + dotPolicy(p) + "\n")
		}
		b.WriteString("  }\n")
	}
	for _, a := range d.arrows {
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", a.from, a.to, dotEdgeStyle(a.class))
	}
	b.WriteString("  subgraph cluster_legend {\n")
	b.WriteString("    label=\"impact status\"; fontname=\"Helvetica\"; fontsize=10; color=\"#b0bec5\";\n")
	for i, s := range Statuses {
		c := colorsOf(s)
		fmt.Fprintf(&b, "    legend%d [label=%q, shape=note, style=filled, fillcolor=%q, color=%q, fontcolor=%q];\n", i, s, c.Fill, c.Stroke, c.Text)
	}
	for i := 1; i < len(Statuses); i++ {
		fmt.Fprintf(&b, "    legend%d -> legend%d [style=invis];\n", i-1, i)
	}
	b.WriteString("  }\n")
	b.WriteString("}\n")
	return []byte(b.String())
}

// dotPolicy is a policy's node: a note in its status's colours, dashed when it has no targets.
func dotPolicy(p drawnPolicy) string {
	c := colorsOf(p.Status)
	style := "filled"
	if takesNoEffect(p.Status) {
		style = "filled,dashed"
	}
	return fmt.Sprintf("%s [label=%s, shape=note, style=%q, fillcolor=%q, color=%q, fontcolor=%q];",
		p.id, dotString(p.Kind+"\n"+policyRef(p.Namespace, p.Name)+"\n"+p.Status), style, c.Fill, c.Stroke, c.Text)
}

func dotEdgeStyle(class string) string {
	switch class {
	case "overrides":
		return `label="overrides", style=bold, color="#b71c1c", fontcolor="#b71c1c"`
	case "defaults":
		return `label="defaults", style=dashed`
	}
	return `style=dotted`
}

// dotString quotes s for DOT: backslashes and quotes escaped, newlines as centred breaks.
func dotString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}
