package check

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// AuditReport lists the stored policies the rules would deny today (`webhook audit -o json`).
type AuditReport struct {
	Findings []AuditFinding `json:"findings"`
	Summary  AuditSummary   `json:"summary"`
}

// AuditSummary counts what the audit looked at and found.
type AuditSummary struct {
	Policies int `json:"policies"`
	Findings int `json:"findings"`
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
	type key struct{ kind, namespace, name string }
	where := make(map[key]manifests.Document, len(s.policies))
	for _, pd := range s.policies {
		meta, _ := pd.doc.Object["metadata"].(map[string]any)
		namespace, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		where[key{stringAt(pd.doc.Object, "kind"), namespace, name}] = manifests.Document{Source: pd.doc.Source, Index: pd.doc.Index}
	}
	report := AuditSnapshot(s.Snapshot(), config)
	for i := range report.Findings {
		f := &report.Findings[i]
		if d, ok := where[key{f.Kind, f.Namespace, f.Name}]; ok {
			f.File, f.Document = d.Source, d.Index
		}
	}
	return report
}

// OnlyIn keeps the findings of policies in namespace (the audit judged them against the
// whole state).
func (r *AuditReport) OnlyIn(namespace string) {
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if f.Namespace == namespace {
			kept = append(kept, f)
		}
	}
	r.Findings = kept
	r.Summary.Findings = len(kept)
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
	findings, audited := impact.Audit(snap, config)
	report := &AuditReport{Findings: []AuditFinding{}, Summary: AuditSummary{Policies: audited, Findings: len(findings)}}
	for _, f := range findings {
		out := AuditFinding{Kind: f.Policy.Row.Kind, Namespace: f.Policy.Namespace, Name: f.Policy.Name, Denials: denials(f.Denials)}
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

// WriteAuditText prints findings for people, oldest first.
func WriteAuditText(w io.Writer, r *AuditReport) error {
	for _, f := range r.Findings {
		ref := f.Name
		if f.Namespace != "" {
			ref = f.Namespace + "/" + f.Name
		}
		if _, err := fmt.Fprintf(w, "WOULD DENY %s %s (created %s)\n", f.Kind, ref, f.Created); err != nil {
			return err
		}
		for _, d := range f.Denials {
			if _, err := fmt.Fprintf(w, "    %s: %s [mode %s]\n", d.Field, d.Message, d.Mode); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d policies audited: %d would be denied today\n", r.Summary.Policies, r.Summary.Findings)
	return err
}

// WriteAuditJSON prints the report as JSON.
func WriteAuditJSON(w io.Writer, r *AuditReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
