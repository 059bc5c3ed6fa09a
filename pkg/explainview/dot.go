package explainview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// DOT renders the graph in Graphviz's language (`dot -Tsvg`): attachment points as boxes
// joined down the hierarchy, each policy a note filled with its status's colour, and an
// arrow from it to each point it attaches at, dashed for defaults, bold for overrides.
func DOT(g Graph) []byte {
	var b strings.Builder
	ids := graphIDs(g)
	b.WriteString("// webhook explain -o dot: render with `dot -Tsvg -o explain.svg`\n")
	b.WriteString("digraph explain {\n")
	b.WriteString("  rankdir=LR;\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9, color=\"#546e7a\"];\n")
	h := hierarchyColors
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %s [label=%s, shape=box, style=\"rounded,filled\", fillcolor=%q, color=%q, fontcolor=%q];\n",
			ids.node[n.ID], dotString(n.Label), h.Fill, h.Stroke, h.Text)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -> %s;\n", ids.node[e.From], ids.node[e.To])
	}
	unattached := g.Unattached()
	for i, p := range g.Policies {
		if !slices.Contains(unattached, i) {
			b.WriteString("  " + dotPolicy(ids.policies[i], p) + "\n")
		}
	}
	if len(unattached) > 0 {
		b.WriteString("  subgraph cluster_unattached {\n")
		b.WriteString("    label=\"on no path shown\"; fontname=\"Helvetica\"; fontsize=10; color=\"#b0bec5\"; style=dashed;\n")
		for _, i := range unattached {
			b.WriteString("    " + dotPolicy(ids.policies[i], g.Policies[i]) + "\n")
		}
		b.WriteString("  }\n")
	}
	for _, a := range g.Attachments {
		from, ok := ids.policy[policyKey{a.Kind, a.Namespace, a.Name}]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", from, ids.node[a.Node], dotEdgeStyle(a.Class))
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
func dotPolicy(id string, p impact.PolicyStatus) string {
	c := colorsOf(p.Status)
	style := "filled"
	if p.Status == "NoTargets" {
		style = "filled,dashed"
	}
	return fmt.Sprintf("%s [label=%s, shape=note, style=%q, fillcolor=%q, color=%q, fontcolor=%q];",
		id, dotString(p.Kind+"\n"+policyRef(p.Namespace, p.Name)+"\n"+p.Status), style, c.Fill, c.Stroke, c.Text)
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

type policyKey struct{ kind, namespace, name string }

// ids are the short identifiers both languages give nodes (n0, n1...) and policies (p0...).
type ids struct {
	node     map[string]string
	policies []string
	policy   map[policyKey]string
}

func graphIDs(g Graph) ids {
	out := ids{node: make(map[string]string, len(g.Nodes)), policy: make(map[policyKey]string, len(g.Policies))}
	for i, n := range g.Nodes {
		out.node[n.ID] = fmt.Sprintf("n%d", i)
	}
	for i, p := range g.Policies {
		id := fmt.Sprintf("p%d", i)
		out.policies = append(out.policies, id)
		out.policy[policyKey{p.Kind, p.Namespace, p.Name}] = id
	}
	return out
}
