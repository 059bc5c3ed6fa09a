package check

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// AuditReport lists the stored policies the rules would deny today (`webhook audit -o json`),
// and where what the controllers wrote into the policies' status disagrees with the
// prediction (docs/status-comparison.md).
type AuditReport struct {
	Findings      []AuditFinding      `json:"findings"`
	Disagreements []AuditDisagreement `json:"disagreements"`
	// KindDrift lists the built-in kinds whose installed CRD admits more than their row,
	// and what: the audit (and admission) judges their policies by the CRD, and a policy
	// relying on it is admitted with a CRDDrift warning. Only on a cluster that runs such a
	// CRD.
	KindDrift []kinds.KindDrift `json:"kindDrift,omitempty"`
	Summary   AuditSummary      `json:"summary"`
}

// AuditSummary counts what the audit looked at and found.
type AuditSummary struct {
	Policies int `json:"policies"`
	Findings int `json:"findings"`
	// StatusesCompared counts the status entries (an ancestor, a GEP-5058 target under one,
	// or a policy's own conditions) compared with the prediction; Disagreements those that
	// disagree.
	StatusesCompared int `json:"statusesCompared"`
	Disagreements    int `json:"disagreements"`
	// KindDrift counts the facts of built-in rows the installed CRDs widen.
	KindDrift int `json:"kindDrift,omitempty"`
}

// AuditDisagreement is one entry of a policy's status where its controller and the
// prediction part ways, with both sides.
type AuditDisagreement struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Class is refusedByController, deniedByWebhook or statusDiffers.
	Class       string            `json:"class"`
	Controller  string            `json:"controller,omitempty"`
	AncestorRef *impact.ObjectRef `json:"ancestorRef,omitempty"`
	TargetRef   *impact.ObjectRef `json:"targetRef,omitempty"`
	// Theirs are the conditions that decided the controller's side; TheirMeaning the impact
	// statuses they agree with, or Refused.
	Theirs       []kinds.Condition `json:"theirs"`
	TheirMeaning []string          `json:"theirMeaning"`
	// Predicted is the impact status over the paths under the ancestor (and through the
	// target), or Denied with the reasons in DeniedFor.
	Predicted string   `json:"predicted"`
	DeniedFor []string `json:"deniedFor,omitempty"`
	Contexts  int      `json:"contexts"`
	Message   string   `json:"message"`
}

// AuditFinding is one policy that would be denied, with each denial's configured mode.
type AuditFinding struct {
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Created   string   `json:"created"`
	Denials   []Denial `json:"denials"`
	// File and Document say where the policy was read (a file, or "cluster RESOURCE"),
	// for CI formats.
	File     string `json:"-"`
	Document int    `json:"-"`
	// group is the policy kind's API group (Kind alone names two kinds of some names).
	group string
}

// Audit treats docs as the stored state (every policy in them exists) and replays the
// policies in GEP-713 order, reporting those the rules would deny.
func Audit(docs []manifests.Document, table *kinds.KindTable, config *rules.Config) (*AuditReport, error) {
	s, err := StateOf(docs, table)
	if err != nil {
		return nil, err
	}
	return s.Audit(config), nil
}

// Audit is Audit of the state built (the builder is spent), each finding located at the
// document its policy was read from.
func (s *StateBuilder) Audit(config *rules.Config) *AuditReport {
	where := make(map[policyID]manifests.Document, len(s.policies))
	for _, pd := range s.policies {
		meta, _ := pd.doc.Object["metadata"].(map[string]any)
		where[policyID{pd.row.GroupKind(), stringAt(meta, "namespace"), stringAt(meta, "name")}] = manifests.Document{Source: pd.doc.Source, Index: pd.doc.Index}
	}
	table := s.b.table
	snap, observed := s.SnapshotWithStatuses()
	report := AuditSnapshotWith(snap, config, observed)
	report.KindDrift = kinds.DriftOf(table, true)
	for _, k := range report.KindDrift {
		report.Summary.KindDrift += len(k.Drift)
	}
	for i := range report.Findings {
		f := &report.Findings[i]
		if d, ok := where[policyID{schema.GroupKind{Group: f.group, Kind: f.Kind}, f.Namespace, f.Name}]; ok {
			f.File, f.Document = d.Source, d.Index
		}
	}
	return report
}

// OnlyIn keeps the findings and disagreements of policies in namespace (the audit judged
// them against the whole state; statusesCompared still counts every namespace's).
func (r *AuditReport) OnlyIn(namespace string) {
	r.Findings = slices.DeleteFunc(r.Findings, func(f AuditFinding) bool { return f.Namespace != namespace })
	r.Disagreements = slices.DeleteFunc(r.Disagreements, func(d AuditDisagreement) bool { return d.Namespace != namespace })
	r.Summary.Findings, r.Summary.Disagreements = len(r.Findings), len(r.Disagreements)
}

// AsReport is the audit as a check report whose results are the findings (each denied, with
// relaxed modes kept on its denials), for the CI formats.
func (r *AuditReport) AsReport() *Report {
	out := &Report{Results: []Result{}}
	for _, f := range r.Findings {
		res := Result{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Operation: "UPDATE",
			Denials: []Denial{}, Warnings: []string{}, Annotations: map[string]string{},
			Source: fmt.Sprintf("%s document %d", f.File, f.Document), File: f.File, Document: f.Document}
		for _, d := range f.Denials {
			if d.Mode == "" || d.Mode == string(rules.Deny) {
				res.Denials = append(res.Denials, d)
			} else {
				res.Relaxed = append(res.Relaxed, d) // admission would admit it today
			}
		}
		res.Allowed = len(res.Denials) == 0
		if res.Allowed {
			out.Summary.Allowed++
		} else {
			out.Summary.Denied++
		}
		out.Results = append(out.Results, res)
	}
	return out
}

// AuditSnapshot is Audit over a snapshot already built.
func AuditSnapshot(snap *index.Snapshot, config *rules.Config) *AuditReport {
	return AuditSnapshotWith(snap, config, nil)
}

// AuditSnapshotWith is AuditSnapshot that also compares the statuses observed (what the
// controllers wrote into the policies) with the predictions.
func AuditSnapshotWith(snap *index.Snapshot, config *rules.Config, observed *impact.Observations) *AuditReport {
	findings, audited := impact.Audit(snap, config)
	report := &AuditReport{Findings: []AuditFinding{}, Disagreements: []AuditDisagreement{}, Summary: AuditSummary{Policies: audited, Findings: len(findings)}}
	compared, disagreements := impact.CompareAll(snap, observed, findings)
	report.Summary.StatusesCompared, report.Summary.Disagreements = compared, len(disagreements)
	for _, d := range disagreements {
		report.Disagreements = append(report.Disagreements, auditDisagreement(d))
	}
	for _, f := range findings {
		out := AuditFinding{Kind: f.Policy.Row.Kind, group: f.Policy.Row.Group, Namespace: f.Policy.Namespace, Name: f.Policy.Name, Denials: denials(f.Denials)}
		if !f.Policy.Created.IsZero() {
			out.Created = f.Policy.Created.UTC().Format(time.RFC3339)
		}
		for i := range out.Denials {
			out.Denials[i].Mode = string(f.Modes[i])
		}
		report.Findings = append(report.Findings, out)
	}
	return report
}

// auditDisagreement is d as `audit -o json` prints it.
func auditDisagreement(d impact.Disagreement) AuditDisagreement {
	out := AuditDisagreement{Kind: d.Policy.Row.Kind, Namespace: d.Policy.Namespace, Name: d.Policy.Name, Class: d.Class,
		Controller: d.Controller, TargetRef: d.Target, Theirs: d.Theirs, TheirMeaning: d.TheirMeaning,
		Predicted: d.Ours, DeniedFor: d.DeniedFor, Contexts: d.Contexts, Message: d.Message()}
	if d.Ancestor != (impact.ObjectRef{}) {
		a := d.Ancestor
		out.AncestorRef = &a
	}
	if out.Theirs == nil {
		out.Theirs = []kinds.Condition{}
	}
	return out
}

// WriteAuditText prints findings for people, oldest first, then the disagreements between
// the controllers' statuses and the predictions, in policy order.
func WriteAuditText(w io.Writer, r *AuditReport) error {
	for _, f := range r.Findings {
		if _, err := fmt.Fprintf(w, "WOULD DENY %s %s (created %s)\n", f.Kind, ref(Result{Namespace: f.Namespace, Name: f.Name}), f.Created); err != nil {
			return err
		}
		for _, d := range f.Denials {
			if _, err := fmt.Fprintf(w, "    %s: %s [mode %s]\n", d.Field, d.Message, d.Mode); err != nil {
				return err
			}
		}
	}
	for _, d := range r.Disagreements {
		if _, err := fmt.Fprintf(w, "DISAGREES %s %s [%s]\n    %s\n", d.Kind, ref(Result{Namespace: d.Namespace, Name: d.Name}), d.Class, d.Message); err != nil {
			return err
		}
	}
	for _, k := range r.KindDrift {
		if _, err := fmt.Fprintf(w, "CRD DRIFT %s\n", k.Heading()); err != nil {
			return err
		}
		for _, d := range k.Drift {
			if _, err := fmt.Fprintf(w, "    %s\n", d); err != nil {
				return err
			}
		}
	}
	if _, err := fmt.Fprintf(w, "%d policies audited: %d would be denied today\n", r.Summary.Policies, r.Summary.Findings); err != nil {
		return err
	}
	if r.Summary.StatusesCompared == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d controller statuses compared with the prediction: %d disagree\n", r.Summary.StatusesCompared, r.Summary.Disagreements)
	return err
}

// WriteAuditJSON prints the report as JSON.
func WriteAuditJSON(w io.Writer, r *AuditReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
