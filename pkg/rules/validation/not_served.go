package validation

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Warning reasons of a kind whose controllers serve some GatewayClasses only
// (kinds.KindRow.Implementations).
const (
	// WarningNotServed: a target reaches Gateways whose GatewayClass no controller of the
	// policy's kind serves; the policy takes no effect through them, so it is judged there
	// for nothing (no conflict, no impact).
	WarningNotServed = "NotServed"
	// WarningGatewayClassNotFound: a Gateway on a target's paths names a GatewayClass that is
	// not there (yet); the policy is judged as if a controller of its kind served it.
	WarningGatewayClassNotFound = "GatewayClassNotFound"
)

// MaxNotServedWarnings bounds the NotServed and GatewayClassNotFound warnings of one policy:
// a selector can reach hundreds of routes under one Gateway, and kubectl prints each line.
const MaxNotServedWarnings = 5

// servedAt reports whether a controller of p's kind acts on some path through key, or key
// has no path yet: the rules that judge what the implementation would refuse there (same
// level conflicts, listeners sharing a port, policies per target) judge only such points.
func servedAt(snap topology.Snapshot, p *policy.Policy, key policy.TargetKey) bool {
	return !p.Row.Scoped() || topology.ServingAt(snap, p.Row, key).Served()
}

// WarnNotServed warns, never denies, about each target whose paths run through Gateways of
// GatewayClasses no controller of p's kind serves (the policy takes no effect through them),
// and each whose Gateways name a GatewayClass not there yet (judged as served).
func WarnNotServed(p *policy.Policy, snap topology.Snapshot) []string {
	if !p.Row.Scoped() {
		return nil
	}
	var warnings []string
	seen := map[policy.TargetKey]bool{}
	for _, t := range topology.Targets(snap, p) {
		if _, ok := p.Row.Target(t.Key.Group, t.Key.Kind); !ok || t.Key.Name == "" || seen[t.Key] {
			continue
		}
		seen[t.Key] = true
		s := topology.ServingAt(snap, p.Row, t.Key)
		where := t.Key.Object().Shown()
		if s.Class != nil && s.Class.Controller != "" {
			warnings = append(warnings, fmt.Sprintf("%s: %s: GatewayClass %q is served by controller %q, which does not act on %s (served by %s); the policy takes no effect there",
				WarningNotServed, t.Path, policy.Echo(s.Class.Class), policy.Echo(s.Class.Controller), p.Row.Kind, p.Row.ServedBy()))
		}
		for _, g := range s.NotServed {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s of GatewayClass %q, whose controller %q does not act on %s (served by %s); the policy takes no effect through it",
				WarningNotServed, t.Path, reaches(where, g.Gateway), policy.Echo(g.Class), policy.Echo(g.Controller), p.Row.Kind, p.Row.ServedBy()))
		}
		for _, g := range s.Missing {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s of GatewayClass %q, which is not found; judged as if a controller of %s served it (served by %s)",
				WarningGatewayClassNotFound, t.Path, reaches(where, g.Gateway), policy.Echo(g.Class), p.Row.Kind, p.Row.ServedBy()))
		}
		if len(warnings) >= MaxNotServedWarnings {
			break
		}
	}
	if len(warnings) > MaxNotServedWarnings {
		warnings = warnings[:MaxNotServedWarnings]
	}
	return warnings
}

// reaches names a Gateway as seen from a target: the Gateway itself, or "X reaches Gateway Y".
func reaches(target string, gw *topology.Object) string {
	shown := gw.Key().Shown()
	if shown == target {
		return shown
	}
	return target + " reaches " + shown
}
