package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// WriteText prints the report for people: one line per verdict, the reasons indented under
// it, a line per kind judged without its CRD, and the counts last.
func WriteText(w io.Writer, r *Report) error {
	if len(r.Enforcement) > 0 {
		if _, err := fmt.Fprintf(w, "enforcement: %s\n", strings.Join(r.Enforcement, "; ")); err != nil {
			return err
		}
	}
	for _, res := range r.Results {
		verdict := "ALLOWED"
		if !res.Allowed {
			verdict = "DENIED "
		}
		ref := res.Name
		if res.Namespace != "" {
			ref = res.Namespace + "/" + res.Name
		}
		if _, err := fmt.Fprintf(w, "%s %s %s (%s, %s)\n", verdict, res.Kind, ref, res.Operation, res.Source); err != nil {
			return err
		}
		for _, d := range res.Denials {
			if _, err := fmt.Fprintf(w, "    %s: %s\n", d.Field, d.Message); err != nil {
				return err
			}
		}
		for _, d := range res.Relaxed {
			if d.Mode == string(rules.Warn) {
				continue // shown among the warnings, as kubectl shows it
			}
			if _, err := fmt.Fprintf(w, "    %s, would deny: %s: %s\n", d.Mode, d.Field, d.Message); err != nil {
				return err
			}
		}
		for _, warning := range res.Warnings {
			if _, err := fmt.Fprintf(w, "    warning: %s\n", warning); err != nil {
				return err
			}
		}
		if summary := res.Annotations[impact.AnnotationImpactSummary]; summary != "" {
			if _, err := fmt.Fprintf(w, "    impact: %s\n", summary); err != nil {
				return err
			}
		}
	}
	if err := writeNotChecked(w, r.NotChecked); err != nil {
		return err
	}
	for _, n := range r.NotJudged {
		if _, err := fmt.Fprintf(w, "not judged: %s: %s\n", n.Kind, n.Message); err != nil {
			return err
		}
	}
	relaxed := ""
	if r.Summary.Relaxed > 0 {
		relaxed = fmt.Sprintf(" (%d only because of Warn or DryRun enforcement)", r.Summary.Relaxed)
	}
	_, err := fmt.Fprintf(w, "%d policies checked: %d allowed%s, %d denied\n",
		len(r.Results), r.Summary.Allowed, relaxed, r.Summary.Denied)
	return err
}

// WriteJSON prints the report in the `-o json` contract.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeNotChecked prints a line per kind judged without its CRD, above the counts, which
// stay the last line.
func writeNotChecked(w io.Writer, list []NotChecked) error {
	for _, n := range list {
		if _, err := fmt.Fprintf(w, "not checked: %s: %s\n", n.Kind, n.Message); err != nil {
			return err
		}
	}
	return nil
}
