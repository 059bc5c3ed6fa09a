package oracle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// Report aggregates outcomes.
type Report struct {
	Scenarios int
	// Refused counts scenarios Envoy Gateway's loader refused as input.
	Refused  int
	Verdicts struct {
		Judged, Agree, ByDesign, FalseDenials, MissedRefusals int
	}
	Statuses struct {
		Judged, Agree, ByDesign int
	}
	// Mixed counts, over the scenarios holding another implementation's GatewayClass, the
	// policies whose targetRefs hang from its Gateway only (Other) or from it and Envoy
	// Gateway's (Both), and of the Other ones those we admit as NotServed and those Envoy
	// Gateway writes no status on.
	Mixed struct {
		Scenarios, Other, Both, NotServed, NoStatus int
	}
	Classes map[string]*Class
	// ByDesign counts the differences docs/policy-kinds.md lists ("where we differ by
	// design"), by which.
	ByDesign map[string]int
	// refusals keeps one loader refusal message, to show.
	refusal string
}

// Class is one kind of disagreement, with its count and the first example.
type Class struct {
	Name    string
	Count   int
	Example string
	// Manifest is the example's scenario, with its policies up to the one judged.
	Manifest []byte
}

// NewReport starts an empty report.
func NewReport() *Report { return &Report{Classes: map[string]*Class{}, ByDesign: map[string]int{}} }

// The differences from Envoy Gateway that are ours by design (docs/policy-kinds.md, "where
// we differ by design"): each is counted apart, neither agreement nor disagreement.
const (
	designMissingSection = "a target section that does not exist is warned, not denied (the object may gain it later in the same apply); EG refuses the policy as TargetNotFound"
	designNoRoutes       = "a policy no route reaches is NoTargets (we judge traffic paths); EG judges it by the Gateway/listener scopes it attaches to"
	designNoServedRoutes = "a policy no route reaches through Envoy Gateway's Gateways, only through another implementation's, is NotServed (we judge traffic paths); EG judges it by the scopes it attaches to on its own Gateways"
	designSelfOverlap    = "a policy naming an object and a section (or ListenerSet) of it is Enforced (its settings apply everywhere); EG marks it Overridden by its own more specific reference"
	designNoTraffic      = "a policy overridden only on a scope no route passes through (a ListenerSet or listener policy that reaches no route) is Enforced here; EG counts the scope"
	designMerged         = "a Gateway policy whose fields a route policy with mergeType replaces is PartiallyEnforced or Overridden here; EG reports it Merged"
	designRefUnjudged    = "a reference into another namespace without a ReferenceGrant is denied (GEP-709) even where no route reaches the policy yet; EG checks it only once one does"
	designRefNotServed   = "a reference into another namespace without a ReferenceGrant is denied (GEP-709) even where only another implementation's Gateways reach the policy; EG, which does not load them, never reads it"
	designConflictUnused = "a second policy at a target nothing uses yet is denied as Conflicted (it would lose once used); EG writes no status until a route reaches the target"
	designUnusedBackend  = "a Gateway API policy on a backend (BackendTLSPolicy) is judged at its Service port; EG writes its status only where a route sends to that port"
	designNoOverridden   = "a Gateway API policy (BackendTLSPolicy) that a section-specific one replaces on a port is PartiallyEnforced or Overridden here; EG writes no Overridden condition on Gateway API's kinds"
)

// overriddenOnListenersOnly reports whether Envoy Gateway's Overridden messages name only
// ListenerSets and listeners ("... for these listenersets: [a/ls]"), never routes.
func overriddenOnListenersOnly(messages string) bool {
	for _, m := range strings.Split(strings.TrimSpace(messages), "\n") {
		if !strings.Contains(m, "listenersets:") && !strings.Contains(m, "gateway listeners:") {
			return false
		}
	}
	return true
}

// only reports whether every reason is want.
func only(reasons []string, want string) bool {
	for _, r := range reasons {
		if r != want {
			return false
		}
	}
	return len(reasons) > 0
}

// verdictByDesign names why a verdict difference is by design, or "".
func verdictByDesign(v Verdict) string {
	switch {
	case !v.Allowed && only(v.Reasons, "RefNotPermitted") && !v.EG.Refused() && v.WouldBe == "NoTargets":
		return designRefUnjudged
	case !v.Allowed && only(v.Reasons, "RefNotPermitted") && v.EG.Verdict == "NoStatus" && v.WouldBe == impact.StatusNotServed:
		return designRefNotServed
	case !v.Allowed && only(v.Reasons, "Conflicted") && v.EG.Verdict == "NoStatus" &&
		v.WouldBe != impact.StatusNotServed && (v.Reach.EG || !v.Reach.Other):
		// Not where only another implementation's Gateways reach, or would once the
		// target is used: neither policy takes effect there, now or then, so a denial is
		// false, not by design.
		return designConflictUnused
	}
	if v.Allowed && v.EG.Verdict == "TargetNotFound" {
		for _, w := range v.Warnings {
			if strings.HasPrefix(w, "SectionNotFound") || strings.HasPrefix(w, "TargetNotFound") {
				return designMissingSection
			}
		}
	}
	return ""
}

// statusByDesign names why a status difference is by design, or "". others are the
// scenario's other verdicts.
func statusByDesign(v Verdict, others []Verdict) string {
	gatewayAPIKind := v.GatewayAPI
	kind, _, _ := strings.Cut(v.Policy, " ")
	noTrafficPeer := slices.ContainsFunc(others, func(o Verdict) bool {
		k, _, _ := strings.Cut(o.Policy, " ")
		return o.Policy != v.Policy && k == kind && o.Allowed && o.Status == "NoTargets"
	})
	switch {
	case v.Status == "Enforced" && v.EG.Overridden && noTrafficPeer && overriddenOnListenersOnly(v.EG.OverriddenBy):
		return designNoTraffic
	case v.EG.Merged && !v.EG.Overridden && ourStatusOverridden(v.Status):
		return designMerged
	case gatewayAPIKind && v.EG.Verdict == "NoStatus":
		return designUnusedBackend
	case gatewayAPIKind && !v.EG.Overridden && ourStatusOverridden(v.Status):
		return designNoOverridden
	case v.Status == "NoTargets":
		return designNoRoutes
	case v.Status == impact.StatusNotServed && v.Reach.EG && !v.EG.Refused():
		// Some target hangs from Envoy Gateway's Gateways, but no route passes there.
		return designNoServedRoutes
	case v.SelfOverlap && v.EG.Overridden && v.Status == "Enforced":
		return designSelfOverlap
	}
	return ""
}

// ourStatusOverridden maps our impact status to Envoy Gateway's Overridden condition: a
// policy some more specific one replaces on some path.
func ourStatusOverridden(status string) bool {
	return status == "Overridden" || status == "PartiallyEnforced"
}

// Add counts one outcome.
func (r *Report) Add(o *Outcome) {
	r.Scenarios++
	if o.Refused != nil {
		r.Refused++
		if r.refusal == "" {
			r.refusal = fmt.Sprintf("%s: %v", o.Scenario.Name(), o.Refused)
		}
		return
	}
	if o.Scenario.Mixed() {
		r.Mixed.Scenarios++
	}
	for i, v := range o.Verdicts {
		r.mixed(v)
		r.Verdicts.Judged++
		kind, _, _ := strings.Cut(v.Policy, " ")
		ours := "allowed"
		if !v.Allowed {
			ours = "denied " + strings.Join(v.Reasons, ",")
		}
		switch {
		case v.Allowed == !v.EG.Refused():
			r.Verdicts.Agree++
		case verdictByDesign(v) != "":
			r.Verdicts.ByDesign++
			r.ByDesign[verdictByDesign(v)]++
			continue
		case v.Allowed:
			r.Verdicts.MissedRefusals++
			r.class(o, i, fmt.Sprintf("missed refusal  %s on %s: EG %s", kind, v.Shape, v.EG.Verdict), v)
			continue
		default:
			r.Verdicts.FalseDenials++
			r.class(o, i, fmt.Sprintf("false denial    %s on %s: ours %s, EG %s", kind, v.Shape, ours, v.EG.Verdict), v)
			continue
		}
		if !v.Allowed || v.EG.Refused() {
			continue
		}
		r.Statuses.Judged++
		var agree bool
		theirs := "Accepted"
		switch {
		case v.EG.Verdict == "NoStatus":
			// NotServed: every path runs through another implementation's Gateways,
			// which Envoy Gateway does not load, so it writes nothing.
			agree, theirs = v.Status == "NoTargets" || v.Status == impact.StatusNotServed, "no status"
		case v.Status == impact.StatusNotServed:
			// Envoy Gateway acts on a policy we say it never sees.
			agree = false
		case v.EG.Overridden:
			agree, theirs = ourStatusOverridden(v.Status), "Overridden"
		default:
			agree = !ourStatusOverridden(v.Status)
		}
		if v.EG.Merged {
			theirs += "+Merged"
		}
		if agree {
			r.Statuses.Agree++
			continue
		}
		if why := statusByDesign(v, o.Verdicts); why != "" {
			r.Statuses.ByDesign++
			r.ByDesign[why]++
			continue
		}
		r.class(o, i, fmt.Sprintf("status          %s on %s: ours %s, EG %s", kind, v.Shape, v.Status, theirs), v)
	}
}

// mixed counts a verdict on what hangs from another implementation's Gateways.
func (r *Report) mixed(v Verdict) {
	switch {
	case v.Reach.Other && v.Reach.EG:
		r.Mixed.Both++
	case v.Reach.Other:
		r.Mixed.Other++
		if v.Allowed && v.Status == impact.StatusNotServed {
			r.Mixed.NotServed++
		}
		if v.EG.Verdict == "NoStatus" {
			r.Mixed.NoStatus++
		}
	}
}

func (r *Report) class(o *Outcome, i int, name string, v Verdict) {
	c := r.Classes[name]
	if c == nil {
		c = &Class{Name: name}
		r.Classes[name] = c
	}
	c.Count++
	if c.Example != "" {
		return
	}
	c.Example = fmt.Sprintf("%s, %s", o.Scenario.Name(), v.Policy)
	if v.EG.Message != "" {
		c.Example += fmt.Sprintf(" (EG: %q)", v.EG.Message)
	}
	// The example's manifest: the objects, the policies before it that were admitted, it.
	var policies []Object
	for j, p := range o.Scenario.Policies[:i+1] {
		if j == i || o.Verdicts[j].Allowed {
			policies = append(policies, p)
		}
	}
	if v.Allowed {
		policies = nil // an admitted policy is judged in the final state: all admitted
		for j, p := range o.Scenario.Policies {
			if o.Verdicts[j].Allowed {
				policies = append(policies, p)
			}
		}
	}
	c.Manifest, _ = YAML(o.Scenario.Objects, policies)
}

// Write prints the report.
func (r *Report) Write(w io.Writer, version string) {
	fmt.Fprintf(w, "Envoy Gateway %s translator against the webhook, %d scenarios", version, r.Scenarios)
	if r.Refused > 0 {
		fmt.Fprintf(w, " (%d refused by its loader, not judged; first: %s)", r.Refused, r.refusal)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "verdicts: %d of %d agree (%s), %d differ by design; %d false denials, %d missed refusals\n",
		r.Verdicts.Agree, r.Verdicts.Judged-r.Verdicts.ByDesign, percent(r.Verdicts.Agree, r.Verdicts.Judged-r.Verdicts.ByDesign),
		r.Verdicts.ByDesign, r.Verdicts.FalseDenials, r.Verdicts.MissedRefusals)
	fmt.Fprintf(w, "statuses (Overridden or not) of policies both admit: %d of %d agree (%s), %d differ by design\n",
		r.Statuses.Agree, r.Statuses.Judged-r.Statuses.ByDesign, percent(r.Statuses.Agree, r.Statuses.Judged-r.Statuses.ByDesign), r.Statuses.ByDesign)
	if r.Mixed.Scenarios > 0 {
		fmt.Fprintf(w, "mixed clusters: %d scenarios hold another implementation's GatewayClass; %d policies target only what hangs from its Gateway (ours NotServed %d, EG no status %d), %d what hangs from both classes' Gateways\n",
			r.Mixed.Scenarios, r.Mixed.Other, r.Mixed.NotServed, r.Mixed.NoStatus, r.Mixed.Both)
	}
	if len(r.ByDesign) > 0 {
		fmt.Fprintln(w, "by design (docs/policy-kinds.md, \"where we differ by design\"):")
		for _, why := range sortedKeys(r.ByDesign) {
			fmt.Fprintf(w, "%6d  %s\n", r.ByDesign[why], why)
		}
	}
	if len(r.Classes) == 0 {
		return
	}
	fmt.Fprintln(w, "disagreements:")
	for _, c := range r.sorted() {
		fmt.Fprintf(w, "%6d  %s\n        e.g. %s\n", c.Count, c.Name, c.Example)
	}
}

func (r *Report) sorted() []*Class {
	out := make([]*Class, 0, len(r.Classes))
	for _, c := range r.Classes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// WriteExamples writes each class's example manifest into dir, one file per class,
// replacing those of an earlier run.
func (r *Report) WriteExamples(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "class-*.yaml"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for i, c := range r.sorted() {
		header := fmt.Sprintf("# %s\n# %s\n", c.Name, c.Example)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("class-%02d.yaml", i+1)), append([]byte(header), c.Manifest...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}

// Check returns why the report fails the bounds ("" when it passes): more false denials
// than maxFalseDenials (-1 for no bound), or verdict or status agreement below the given
// fractions.
func (r *Report) Check(maxFalseDenials int, minVerdicts, minStatuses float64) string {
	switch {
	case r.Refused > 0:
		return fmt.Sprintf("%d scenarios refused by Envoy Gateway's loader: the generator wrote what its CRDs refuse", r.Refused)
	case maxFalseDenials >= 0 && r.Verdicts.FalseDenials > maxFalseDenials:
		return fmt.Sprintf("%d false denials, at most %d allowed", r.Verdicts.FalseDenials, maxFalseDenials)
	case float64(r.Verdicts.Agree) < minVerdicts*float64(r.Verdicts.Judged-r.Verdicts.ByDesign):
		return fmt.Sprintf("verdict agreement %s, below %.1f %%", percent(r.Verdicts.Agree, r.Verdicts.Judged-r.Verdicts.ByDesign), 100*minVerdicts)
	case float64(r.Statuses.Agree) < minStatuses*float64(r.Statuses.Judged-r.Statuses.ByDesign):
		return fmt.Sprintf("status agreement %s, below %.1f %%", percent(r.Statuses.Agree, r.Statuses.Judged-r.Statuses.ByDesign), 100*minStatuses)
	}
	return ""
}
