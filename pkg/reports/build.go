package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

const (
	// Name is the name of the Report in each namespace.
	Name = "policyattachment"
	// Source names this project as the engine behind a Report and its results.
	Source = "policyattachment.io"
	// PolicyName is each result's policy: the GEP-713 rules this project applies.
	PolicyName = "gateway-api-policy-attachment"
	// RuleImpact is the rule of a policy's impact result; an audit finding's rule is the
	// denial's reason (Conflicted, RefNotPermitted, ...).
	RuleImpact = "impact"
	// RulePrediction is the rule of a disagreement between what a controller wrote into the
	// policy's status and the prediction (docs/status-comparison.md).
	RulePrediction = "prediction"
	// ManagedByLabel and ManagedBy mark the Reports the writer owns; it never touches others.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "policyattachment-webhook"
	category       = "Gateway API policy attachment"
)

// results of an impact status: a policy enforced everywhere passes; one that is overridden
// somewhere, or reaches nothing, does not fail a rule but deserves a look.
var statusResults = map[string]reportsv1alpha1.Result{
	impact.StatusEnforced:          "pass",
	impact.StatusPartiallyEnforced: "warn",
	impact.StatusOverridden:        "warn",
	impact.StatusNoTargets:         "warn",
	// No controller of its kind serves the Gateways it reaches: nothing to judge there.
	impact.StatusNotServed: "skip",
}

// Build returns the Report each namespace that holds policies should have, by namespace.
// Results carry no timestamp (Writer sets them). Cluster-scoped policies get no Report.
func Build(snap topology.State, config *rules.Config) map[string]*reportsv1alpha1.Report {
	return BuildWith(snap, config, nil)
}

// BuildWith is Build that also compares what the controllers wrote into the policies'
// status (observed) with the predictions: a result per disagreement, rule prediction.
func BuildWith(snap topology.State, config *rules.Config, observed *impact.Observations) map[string]*reportsv1alpha1.Report {
	msgs := config.MessagesOrNil()
	var readers validation.Messages
	if msgs != nil {
		readers = *msgs
	}
	out := map[string]*reportsv1alpha1.Report{}
	report := func(namespace string) *reportsv1alpha1.Report {
		r, ok := out[namespace]
		if !ok {
			r = &reportsv1alpha1.Report{
				TypeMeta:   metav1.TypeMeta{APIVersion: reportsv1alpha1.SchemeGroupVersion.String(), Kind: "Report"},
				ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: namespace, Labels: map[string]string{ManagedByLabel: ManagedBy}},
				Source:     Source,
				Results:    []reportsv1alpha1.ReportResult{},
			}
			out[namespace] = r
		}
		return r
	}
	cache := merge.NewCache()
	for _, p := range snap.Policies() {
		if p.Namespace == "" {
			continue
		}
		im := impact.Predict(snap, p, cache).ForAnnotation(p, msgs)
		r := report(p.Namespace)
		r.Results = append(r.Results, impactResult(p, im, msgs))
	}
	findings, _ := impact.AuditWith(impact.NewAuditor(config).ForReaders(readers), snap)
	_, disagreements := impact.CompareAll(snap, observed, findings)
	for _, d := range disagreements {
		if d.Policy.Namespace != "" {
			r := report(d.Policy.Namespace)
			r.Results = append(r.Results, predictionResult(d))
		}
	}
	for _, f := range findings {
		if f.Policy.Namespace == "" {
			continue
		}
		r := report(f.Policy.Namespace)
		for i, e := range f.Denials {
			r.Results = append(r.Results, findingResult(f.Policy, e.Field, e.ErrorBody(), validation.ReasonOf(e), f.Modes[i]))
		}
	}
	for _, r := range out {
		sortResults(r.Results)
		r.Summary = summarize(r.Results)
	}
	return out
}

func subject(p *policy.Policy) []corev1.ObjectReference {
	apiVersion := p.Version
	if p.Row.Group != "" {
		apiVersion = p.Row.Group + "/" + p.Version
	}
	return []corev1.ObjectReference{{Kind: p.Row.Kind, APIVersion: apiVersion, Namespace: p.Namespace, Name: p.Name, UID: uidOf(p)}}
}

func uidOf(p *policy.Policy) types.UID { return types.UID(p.UID) }

func impactResult(p *policy.Policy, im impact.Impact, msgs *validation.Messages) reportsv1alpha1.ReportResult {
	props := map[string]string{
		"status":   im.Status,
		"contexts": strconv.Itoa(im.Contexts),
		"enforced": strconv.Itoa(im.Enforced),
	}
	if im.PartiallyEnforced > 0 {
		props["partiallyEnforced"] = strconv.Itoa(im.PartiallyEnforced)
	}
	if im.Overridden > 0 {
		props["overridden"] = strconv.Itoa(im.Overridden)
	}
	if len(im.Overrides) > 0 {
		props["overrides"] = joinRefs(im.Overrides, im.OverridesTotal)
	}
	if len(im.OverriddenBy) > 0 {
		props["overriddenBy"] = joinRefs(im.OverriddenBy, im.OverriddenByTotal)
	}
	if len(im.Ancestors) > 0 {
		props["ancestors"] = ancestorsText(im.Ancestors, im.AncestorsTotal)
	}
	return reportsv1alpha1.ReportResult{
		Source: Source, Policy: PolicyName, Rule: RuleImpact, Category: category, Severity: "info",
		Result: statusResults[im.Status], Subjects: subject(p), Description: im.CurrentSummary(p, msgs),
		Properties: props,
	}
}

// ancestorsText is GEP-5058's per-ancestor, per-target view in one line: "Gateway infra/gw:
// PartiallyAccepted, Enforced (HTTPRoute app/store: Accepted, Enforced; HTTPRoute
// app/missing: TargetNotFound)", ancestors joined by " | ".
func ancestorsText(ancestors []impact.AncestorStatus, total int) string {
	parts := make([]string, 0, len(ancestors)+1)
	for _, a := range ancestors {
		targets := make([]string, 0, len(a.Targets)+1)
		for _, t := range a.Targets {
			s := t.TargetRef.String() + ": " + t.Accepted
			if t.Accepted == impact.ReasonAccepted {
				s += ", " + t.Status
			}
			targets = append(targets, s)
		}
		if a.TargetsTotal > len(a.Targets) {
			targets = append(targets, fmt.Sprintf("and %d more", a.TargetsTotal-len(a.Targets)))
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %s (%s)", a.AncestorRef, a.Accepted, a.Status, strings.Join(targets, "; ")))
	}
	if total > len(ancestors) {
		parts = append(parts, fmt.Sprintf("and %d more", total-len(ancestors)))
	}
	return strings.Join(parts, " | ")
}

// predictionResult is a disagreement between a controller's status and the prediction: a
// warning (neither side is known wrong; the platform team looks at both).
func predictionResult(d impact.Disagreement) reportsv1alpha1.ReportResult {
	props := map[string]string{"class": d.Class, "where": d.Where(), "theirs": d.TheirsText(), "theirMeaning": strings.Join(d.TheirMeaning, ", ")}
	if d.Ours == impact.Denied {
		props["predicted"] = impact.Denied + " (" + strings.Join(d.DeniedFor, ", ") + ")"
	} else {
		props["predicted"] = d.Ours
		props["contexts"] = strconv.Itoa(d.Contexts)
	}
	if d.Controller != "" {
		props["controller"] = d.Controller
	}
	return reportsv1alpha1.ReportResult{
		Source: Source, Policy: PolicyName, Rule: RulePrediction, Category: category, Severity: "low",
		Result: "warn", Subjects: subject(d.Policy), Description: d.Message(), Properties: props,
	}
}

func findingResult(p *policy.Policy, path, message, reason string, mode rules.Mode) reportsv1alpha1.ReportResult {
	result := reportsv1alpha1.Result("fail")
	if mode != rules.Deny {
		result = "warn" // admission would admit it today, with a warning or silently
	}
	return reportsv1alpha1.ReportResult{
		Source: Source, Policy: PolicyName, Rule: reason, Category: category, Severity: "medium",
		Result: result, Subjects: subject(p), Description: fmt.Sprintf("%s: %s", path, message),
		Properties: map[string]string{"field": path, "mode": string(mode)},
	}
}

// joinRefs lists policy references, saying how many there are when the list was cut.
func joinRefs(refs []string, total int) string {
	s := strings.Join(refs, ", ")
	if total > len(refs) {
		s += fmt.Sprintf(" and %d more", total-len(refs))
	}
	return s
}

// sortResults orders results by subject, then impact first, then rule and text: a Report
// built twice from one state is the same object.
func sortResults(results []reportsv1alpha1.ReportResult) {
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if ka, kb := subjectKey(a), subjectKey(b); ka != kb {
			return ka < kb
		}
		if (a.Rule == RuleImpact) != (b.Rule == RuleImpact) {
			return a.Rule == RuleImpact
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Description < b.Description
	})
}

func subjectKey(r reportsv1alpha1.ReportResult) string {
	if len(r.Subjects) == 0 {
		return ""
	}
	s := r.Subjects[0]
	return s.APIVersion + "/" + s.Kind + "/" + s.Name
}

func summarize(results []reportsv1alpha1.ReportResult) reportsv1alpha1.ReportSummary {
	var s reportsv1alpha1.ReportSummary
	for _, r := range results {
		switch r.Result {
		case "pass":
			s.Pass++
		case "fail":
			s.Fail++
		case "warn":
			s.Warn++
		case "error":
			s.Error++
		case "skip":
			s.Skip++
		}
	}
	return s
}
