package explainview

import (
	"fmt"
	"html"
	"html/template"
	"strconv"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// svgGroup draws one group of the layout as inline SVG (no namespace URL, no external
// reference, no style attribute: the page's CSS, admitted by hash, styles it by class).
// Every text is escaped here; the result is trusted markup for the page's template.
// Boxes carry data-box (node, badge, entry) so a test can find them and check that none
// overlaps another.
func svgGroup(l Layout, grp Group, ex impact.Explanation, title string) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="hierarchy" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		l.Width, grp.Height, l.Width, grp.Height, esc(title))
	for _, c := range l.Columns {
		fmt.Fprintf(&b, `<text class="column" x="%d" y="%d">%s</text>`, c.X, titleH-10, esc(c.Title))
	}
	for _, e := range grp.Edges {
		fmt.Fprintf(&b, `<path class="edge" data-paths="%s" d="%s"/>`, ints(e.Paths), curve(e.X1, e.Y1, e.X2, e.Y2))
	}
	for _, e := range grp.Entries {
		leaf := grp.Nodes[e.Leaf]
		fmt.Fprintf(&b, `<path class="edge to-entry" data-paths="%d" d="%s"/>`, e.Path, curve(leaf.X+leaf.W, leaf.Y+nodeHead/2, e.X, e.Y+e.H/2))
	}
	for _, n := range grp.Nodes {
		fmt.Fprintf(&b, `<g class="node" data-level="%s" data-paths="%s"><title>%s</title>`, esc(n.Level), ints(n.Paths), esc(n.ID))
		fmt.Fprintf(&b, `<rect class="box" data-box="node" x="%d" y="%d" width="%d" height="%d" rx="4"/>`, n.X, n.Y, n.W, n.H)
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d">%s</text>`, n.X+nodePad, n.Y+nodeHead/2+labelSize/2-2,
			esc(fit(n.Label, n.W-2*nodePad, labelAdvance)))
		for _, bd := range n.Badges {
			p := ex.Policies[bd.Policy]
			text := badgeText(p, bd.Classes)
			how := strings.Join(bd.Classes, " and ")
			if how == "" {
				how = "no rules"
			}
			fmt.Fprintf(&b, `<g class="badge %s" data-policy="%d" tabindex="0" role="button"><title>%s %s: %s; %s here</title>`,
				statusClass(p.Status), bd.Policy, esc(p.Kind), esc(policyRef(p.Namespace, p.Name)), esc(p.Status), esc(how))
			fmt.Fprintf(&b, `<rect data-box="badge" x="%d" y="%d" width="%d" height="%d" rx="3"/>`, bd.X, bd.Y, bd.W, bd.H)
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text></g>`, bd.X+nodePad, bd.Y+badgeH/2+badgeSize/2-2,
				esc(fit(text, bd.W-2*nodePad, badgeAdvance)))
		}
		b.WriteString(`</g>`)
	}
	for _, e := range grp.Entries {
		p := ex.Paths[e.Path]
		class := "nowinner"
		if len(e.Winners) > 0 {
			class = statusClass(ex.Policies[e.Winners[0]].Status)
		}
		fmt.Fprintf(&b, `<a class="entry %s" href="#path-%d" data-path="%d" data-paths="%d"><title>%s: %s</title>`,
			class, e.Path, e.Path, e.Path, esc(p.Kind), esc(strings.Join(p.Path, " > ")))
		fmt.Fprintf(&b, `<rect data-box="entry" x="%d" y="%d" width="%d" height="%d" rx="%d"/>`, e.X, e.Y, e.W, e.H, e.H/2)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text></a>`, e.X+nodePad+2, e.Y+e.H/2+badgeSize/2-2,
			esc(fit(entryText(ex, e), e.W-2*nodePad-4, badgeAdvance)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text above is escaped by esc
}

// curve is an S-shaped edge from the right side of one box to the left side of another.
func curve(x1, y1, x2, y2 int) string {
	mid := (x1 + x2) / 2
	return fmt.Sprintf("M%d %dC%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2)
}

func ints(list []int) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " ")
}

func esc(s string) string { return html.EscapeString(s) }
