package explainview

import "strings"

// Statuses are the impact statuses in the order legends list them.
var Statuses = []string{"Enforced", "PartiallyEnforced", "Overridden", "NoTargets", "NotServed"}

// colors is how a status is drawn: fill, border, text. One table for every format.
type colors struct{ Fill, Stroke, Text string }

var statusColors = map[string]colors{
	"Enforced":          {"#c8e6c9", "#2e7d32", "#1b3d1d"},
	"PartiallyEnforced": {"#ffe0b2", "#e65100", "#4e2600"},
	"Overridden":        {"#ffcdd2", "#c62828", "#4a0d0d"},
	"NoTargets":         {"#eeeeee", "#757575", "#303030"},
	"NotServed":         {"#f5f5f5", "#9e9e9e", "#424242"},
}

// otherColors draws a status this package does not know (a newer model's).
var otherColors = colors{"#e3f2fd", "#1565c0", "#0d2a4d"}

func colorsOf(status string) colors {
	if c, ok := statusColors[status]; ok {
		return c
	}
	return otherColors
}

// statusClass is a status as a CSS or Mermaid class name ("partiallyenforced").
func statusClass(status string) string {
	if _, ok := statusColors[status]; !ok {
		return "other"
	}
	return strings.ToLower(status)
}

// hierarchyColors draws the attachment points.
var hierarchyColors = colors{"#ffffff", "#546e7a", "#263238"}

// policyRef is how the explanation names a policy in overrides and sources.
func policyRef(namespace, name string) string { return namespace + "/" + name }

// takesNoEffect reports a status drawn dashed: the policy applies on no path (none yet, or
// none its kind's controllers serve).
func takesNoEffect(status string) bool { return status == "NoTargets" || status == "NotServed" }
