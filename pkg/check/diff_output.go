package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/policyattachment/webhook/pkg/manifests"
)

// WriteDiffText prints the diff for people: the findings introduced, fixed and unchanged,
// each under its policy; each path whose effective settings change, with every setting
// that changes (before -> after, and the policy that supplies it); each policy whose impact
// status changes; a line per kind of the change set judged without its CRD; and a summary
// line.
func WriteDiffText(w io.Writer, r *DiffReport) error {
	var b strings.Builder
	if len(r.Enforcement) > 0 {
		fmt.Fprintf(&b, "enforcement: %s\n", strings.Join(r.Enforcement, "; "))
	}
	for _, section := range []struct {
		title string
		list  []DiffFinding
	}{{"Introduced", r.Introduced}, {"Fixed", r.Fixed}, {"Unchanged", r.Unchanged}} {
		fmt.Fprintf(&b, "%s (%d):\n", section.title, len(section.list))
		if len(section.list) == 0 {
			b.WriteString("  <none>\n")
		}
		last := ""
		for _, f := range section.list {
			if h := findingHeader(f); h != last {
				fmt.Fprintf(&b, "  %s\n", h)
				last = h
			}
			fmt.Fprintf(&b, "    %s\n", findingLine(f))
		}
	}
	fmt.Fprintf(&b, "Effective settings (%d %s):\n", len(r.Paths), plural(len(r.Paths), "path changes", "paths change"))
	if len(r.Paths) == 0 {
		b.WriteString("  <none>\n")
	}
	for _, p := range r.Paths {
		fmt.Fprintf(&b, "  %s: %s\n", p.Kind, strings.Join(p.Path, " > "))
		for _, s := range p.Settings {
			fmt.Fprintf(&b, "    %-24s %s -> %s\n", s.Name+":", settingText(s.Before), settingText(s.After))
		}
	}
	fmt.Fprintf(&b, "Impact statuses (%d %s):\n", len(r.Policies), plural(len(r.Policies), "policy changes", "policies change"))
	if len(r.Policies) == 0 {
		b.WriteString("  <none>\n")
	}
	for _, s := range r.Policies {
		fmt.Fprintf(&b, "  %s %s: %s -> %s\n", s.Kind, ref(Result{Namespace: s.Namespace, Name: s.Name}), orNone(s.Before), orNone(s.After))
	}
	if err := writeNotChecked(&b, r.NotChecked); err != nil {
		return err
	}
	checked := r.Summary.Allowed + r.Summary.Denied
	fmt.Fprintf(&b, "%d %s checked: %d allowed, %d denied; findings: %d introduced, %d fixed, %d unchanged\n",
		checked, plural(checked, "policy", "policies"), r.Summary.Allowed, r.Summary.Denied,
		r.Summary.Introduced, r.Summary.Fixed, r.Summary.Unchanged)
	_, err := io.WriteString(w, b.String())
	return err
}

// findingHeader names a finding's policy: where the change set holds it, or that it is
// stored and outside the change set.
func findingHeader(f DiffFinding) string {
	where := "stored, not in the change set"
	if f.Origin == OriginCheck {
		where = fmt.Sprintf("%s, %s document %d", f.Operation, f.File, f.Document)
	}
	return fmt.Sprintf("%s %s (%s)", f.Kind, ref(Result{Namespace: f.Namespace, Name: f.Name}), where)
}

// findingLine is one finding as check and audit print theirs.
func findingLine(f DiffFinding) string {
	at := f.Message
	if f.Field != "" {
		at = f.Field + ": " + f.Message
	}
	switch {
	case f.Severity == SeverityWarning:
		return "warning: " + f.Message
	case f.Severity == SeverityRelaxed:
		return f.Mode + ", would deny: " + at
	case f.Origin == OriginAudit:
		return "would deny: " + at
	}
	return "denied: " + at
}

func settingText(s *Setting) string {
	if s == nil {
		return "<none>"
	}
	data, err := json.Marshal(s.Value)
	if err != nil {
		data = []byte(fmt.Sprint(s.Value))
	}
	return fmt.Sprintf("%s (from %s)", data, s.Source)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WriteDiffJSON prints the diff as JSON (the `check --diff -o json` contract).
func WriteDiffJSON(w io.Writer, r *DiffReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteDiffSARIF writes the introduced findings as a SARIF 2.1.0 log (writeSARIFLog, as
// WriteSARIF writes check's): one rule per reason, a denial an error, a relaxed denial or a
// warning a warning.
// A finding of a change set's policy is at its file and document; one of a stored policy
// outside the change set is at the change set's documents it targets, else the
// ReferenceGrants of the change set in the namespaces it references, else the change set's
// first document (code scanning shows a result only at a file of the repository).
func WriteDiffSARIF(w io.Writer, r *DiffReport, version string) error {
	results := []sarifResult{}
	for _, f := range r.Introduced {
		level := "warning"
		if f.Severity == SeverityDenial {
			level = "error"
		}
		who := fmt.Sprintf("%s %s", f.Kind, ref(Result{Namespace: f.Namespace, Name: f.Name}))
		text := who + ": " + strings.TrimPrefix(findingLine(f), "denied: ")
		docs := []manifests.Document{{Source: f.File, Index: f.Document}}
		logical := fmt.Sprintf("%s (document %d)", who, f.Document)
		if f.Origin == OriginAudit {
			text = "stored " + who + " (not in the change set): " + findingLine(f)
			docs, logical = f.causes, who+" (stored)"
		}
		var locations []sarifLocation
		for _, d := range docs {
			locations = append(locations, sarifLocation{
				PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: d.Source}},
				LogicalLocations: []sarifLogical{{FullyQualifiedName: logical, Kind: "resource"}},
			})
		}
		results = append(results, sarifResult{RuleID: f.Reason, Level: level, Message: sarifMessage{Text: text}, Locations: locations})
	}
	return writeSARIFLog(w, version, results, r.NotChecked)
}
