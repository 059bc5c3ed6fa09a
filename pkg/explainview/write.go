package explainview

import (
	"fmt"
	"io"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Formats are the output formats this package writes (`explain -o`).
var Formats = []string{"dot", "mermaid", "html"}

// Write renders the explanation of snap in one of Formats; target is explain's --target,
// if any, and heads the HTML page as the text output does.
func Write(w io.Writer, format string, snap topology.State, ex impact.Explanation, target *policy.TargetKey) error {
	var out []byte
	g := graphOf(snap, ex)
	switch format {
	case "dot":
		out = DOT(g)
	case "mermaid":
		out = Mermaid(g)
	case "html":
		title := "Policies"
		if target != nil {
			title = "Policies on the paths through " + target.String()
		}
		page, err := HTML(g, title)
		if err != nil {
			return err
		}
		out = page
	default:
		return fmt.Errorf("unknown picture format %q", format)
	}
	_, err := w.Write(out)
	return err
}
