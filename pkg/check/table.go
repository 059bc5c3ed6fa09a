package check

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// newTable writes aligned columns as kubectl's tables do.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 6, 4, 3, ' ', 0) }

// WriteTable prints the report as a table (`-o wide`): one row per policy with its verdict,
// the reasons it was denied or would be (under Warn or DryRun), how many warnings it got,
// and where it was read. The messages are in the text output.
func WriteTable(w io.Writer, r *Report) error {
	t := newTable(w)
	fmt.Fprintln(t, "VERDICT\tKIND\tNAMESPACE\tNAME\tOPERATION\tREASONS\tWARNINGS\tSOURCE")
	for _, res := range r.Results {
		verdict := "Allowed"
		if !res.Allowed {
			verdict = "Denied"
		}
		var reasons []string
		for _, d := range res.Denials {
			reasons = append(reasons, d.Reason)
		}
		for _, d := range res.Relaxed {
			reasons = append(reasons, d.Reason+"("+d.Mode+")")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", verdict, res.Kind, orNone(res.Namespace), res.Name,
			res.Operation, joinReasons(reasons), len(res.Warnings), res.Source)
	}
	return t.Flush()
}

// WriteAuditTable prints the findings as a table (`-o wide`), oldest first.
func WriteAuditTable(w io.Writer, r *AuditReport) error {
	t := newTable(w)
	fmt.Fprintln(t, "KIND\tNAMESPACE\tNAME\tCREATED\tREASONS\tMODES")
	for _, f := range r.Findings {
		var reasons, modes []string
		for _, d := range f.Denials {
			reasons = append(reasons, d.Reason)
			modes = append(modes, d.Mode)
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Kind, orNone(f.Namespace), f.Name, f.Created,
			joinReasons(reasons), joinReasons(modes))
	}
	return t.Flush()
}

// joinReasons lists each distinct value once, in first-seen order, or <none>.
func joinReasons(values []string) string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return orNone(strings.Join(out, ","))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
