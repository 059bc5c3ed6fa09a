package kindsdrift

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Drift is one fact on which a kind row and its implementation's CRD disagree.
type Drift struct {
	// Kind is the policy kind, "group/Kind".
	Kind string
	// Fact names what disagrees: versions, targetRefFields, maxTargetRefs, targetKinds,
	// targetGroups, fieldTargetKinds, exclusiveFields, selectorsExclusive, targetNamespace,
	// reference, referenceKinds.
	Fact string
	// Item is the version, field, kind, group or path the fact is about ("" for a scalar).
	Item string
	// Row and CRD say what each side holds.
	Row, CRD string
}

// Key identifies a drift for a table of known drift: "group/Kind fact item".
func (d Drift) Key() string {
	return strings.TrimSpace(d.Kind + " " + d.Fact + " " + d.Item)
}

func (d Drift) String() string {
	return fmt.Sprintf("%s: row %s; CRD %s", d.Key(), d.Row, d.CRD)
}

// Compare lists where row contradicts the facts of its CRD, and returns the facts read at
// the primary version: the CRD's storage version when the row lists it, else the last
// version the row lists that the CRD serves.
func Compare(row *kinds.KindRow, crd *CRD) ([]Drift, Facts) {
	gk := row.Group + "/" + row.Kind
	var out []Drift
	add := func(fact, item, r, c string) {
		out = append(out, Drift{Kind: gk, Fact: fact, Item: item, Row: r, CRD: c})
	}

	for _, v := range crd.Served {
		if len(row.Versions) > 0 && !slices.Contains(row.Versions, v) {
			add("versions", v, "does not list it", "serves it")
		}
	}
	for _, v := range row.Versions {
		if !slices.Contains(crd.Served, v) {
			add("versions", v, "lists it", "does not serve it")
		}
	}

	// Every version the row lists and the CRD serves is read, the primary one (the storage
	// version, else the row's last) first; a fact is reported once, from the first version
	// that shows it.
	var versions []string
	for _, v := range crd.Served {
		if len(row.Versions) == 0 || slices.Contains(row.Versions, v) {
			versions = append(versions, v)
		}
	}
	primary := crd.Storage
	if len(versions) > 0 && !slices.Contains(versions, primary) {
		primary = versions[len(versions)-1]
	}
	versions = append([]string{primary}, slices.DeleteFunc(versions, func(v string) bool { return v == primary })...)
	seen := map[string]bool{}
	for _, d := range out {
		seen[d.Key()] = true
	}
	var facts Facts
	inSome := map[string]bool{} // reference paths some version has
	for i, v := range versions {
		f := FactsOf(crd, v)
		if i == 0 {
			facts = f
		}
		for _, r := range f.References {
			inSome[r.Path] = true
		}
		for _, d := range compareFacts(row, f) {
			if !seen[d.Key()] {
				seen[d.Key()] = true
				out = append(out, d)
			}
		}
	}
	// A reference the row lists is drift only when no version has it: a field that moved
	// between served versions (kube-agentic-networking's externalAuth) is listed at both.
	out = slices.DeleteFunc(out, func(d Drift) bool {
		return d.Fact == "reference" && d.Row == "lists it" && inSome[d.Item]
	})
	return out, facts
}

// compareFacts lists where row contradicts the facts of one CRD version.
func compareFacts(row *kinds.KindRow, f Facts) []Drift {
	gk := row.Group + "/" + row.Kind
	version := f.Version
	var out []Drift
	add := func(fact, item, r, c string) {
		out = append(out, Drift{Kind: gk, Fact: fact, Item: item, Row: r, CRD: c})
	}
	for _, name := range TargetFields {
		inRow, inCRD := row.HasTargetRefField(name), slices.Contains(f.TargetRefFields, name)
		switch {
		case inRow && !inCRD:
			add("targetRefFields", name, "reads it", "has no such field at "+version)
		case !inRow && inCRD:
			add("targetRefFields", name, "does not read it", "has it at "+version)
		}
	}

	if row.HasTargetRefField("targetRefs") && slices.Contains(f.TargetRefFields, "targetRefs") {
		rowMax, crdMax := RowMaxTargetRefs(row), f.MaxTargetRefs
		if rowMax != crdMax {
			add("maxTargetRefs", "", limit(rowMax), limit(crdMax))
		}
	}

	rowKinds, rowGroups := map[string]bool{}, map[string]bool{}
	for _, t := range row.Targets {
		rowKinds[t.Kind] = true
		rowGroups[t.Group] = true
	}
	if f.TargetKinds != nil {
		for _, k := range f.TargetKinds {
			if !rowKinds[k] {
				add("targetKinds", k, "does not admit it", "admits it")
			}
		}
		for _, k := range keys(rowKinds) {
			if !slices.Contains(f.TargetKinds, k) {
				add("targetKinds", k, "admits it", "refuses it")
			}
		}
	}
	if f.TargetGroups != nil {
		for _, g := range keys(rowGroups) {
			if !slices.Contains(f.TargetGroups, g) {
				add("targetGroups", quoteGroup(g), "admits it", "refuses it")
			}
		}
	}

	fields := make([]string, 0, len(f.FieldTargetKinds))
	for field := range f.FieldTargetKinds {
		fields = append(fields, field)
	}
	sort.Strings(fields)
	for _, field := range fields {
		ks := f.FieldTargetKinds[field]
		if field == row.Strategy.Field {
			if !sameSet(ks, row.Strategy.TargetKinds) {
				add("fieldTargetKinds", field, fmt.Sprintf("only %v", row.Strategy.TargetKinds), fmt.Sprintf("only %v", ks))
			}
			continue
		}
		add("fieldTargetKinds", field, "no rule", fmt.Sprintf("only %v", ks))
	}

	for _, x := range f.ExclusiveFields {
		if !slices.Contains(row.ExclusiveFields, x) {
			add("exclusiveFields", x, "admits it with a target", "refuses it with a target")
		}
	}
	for _, x := range row.ExclusiveFields {
		if !slices.Contains(f.ExclusiveFields, x) {
			add("exclusiveFields", x, "refuses it with a target", "has no rule against it")
		}
	}
	if f.SelectorsExclusive != row.SelectorsExclusive {
		add("selectorsExclusive", "", fmt.Sprint(row.SelectorsExclusive), fmt.Sprint(f.SelectorsExclusive))
	}

	rowNS := "own namespace only"
	switch {
	case row.TargetNamespace == kinds.TargetNamespaceForbidden:
		rowNS = "forbidden"
	case row.CrossNamespaceTargets:
		rowNS = "allowed with a ReferenceGrant"
	}
	switch {
	case f.TargetNamespace == "forbidden" && row.TargetNamespace != kinds.TargetNamespaceForbidden:
		add("targetNamespace", "", rowNS, "forbidden: must be empty or absent")
	case f.TargetNamespace != "forbidden" && row.TargetNamespace == kinds.TargetNamespaceForbidden:
		add("targetNamespace", "", rowNS, f.TargetNamespace)
	case f.TargetNamespace == "absent" && row.CrossNamespaceTargets:
		add("targetNamespace", "", rowNS, "no namespace field")
	case f.TargetNamespace == "allowed" && !row.CrossNamespaceTargets:
		add("targetNamespace", "", rowNS, "a namespace field with no rule against other namespaces")
	}

	rowRefs := map[string]kinds.Reference{}
	for _, r := range row.References {
		rowRefs[r.Path] = r
	}
	crdRefs := map[string]bool{}
	for _, r := range f.References {
		crdRefs[r.Path] = true
		listed, ok := rowRefs[r.Path]
		if !ok {
			if r.Namespaced {
				add("reference", r.Path, "does not list it", "a reference with a namespace field")
			}
			continue
		}
		if r.Kinds == nil || len(listed.Kinds) == 0 {
			continue
		}
		for _, k := range r.Kinds {
			if !slices.Contains(listed.Kinds, k) {
				add("referenceKinds", r.Path+" "+k, "refuses it", "admits it")
			}
		}
		for _, k := range listed.Kinds {
			if !slices.Contains(r.Kinds, k) {
				add("referenceKinds", r.Path+" "+k, "admits it", "refuses it")
			}
		}
	}
	for _, r := range row.References {
		if !crdRefs[r.Path] {
			add("reference", r.Path, "lists it", "has no reference-shaped field there")
		}
	}
	return out
}

// RowMaxTargetRefs is the cap the engine applies to spec.targetRefs (row.MaxRefs); 0 for
// none.
func RowMaxTargetRefs(row *kinds.KindRow) int {
	n := row.MaxRefs()
	if n <= 0 || n == math.MaxInt {
		return 0
	}
	return n
}

func limit(n int) string {
	if n <= 0 {
		return "no limit"
	}
	return fmt.Sprintf("at most %d", n)
}

func quoteGroup(g string) string {
	if g == "" {
		return `""`
	}
	return g
}

func sameSet(a, b []string) bool {
	x, y := sortedSet(a), sortedSet(b)
	return slices.Equal(x, y)
}

// Result is the check of every row of a table against a set of sources.
type Result struct {
	// Checked maps "group/Kind" to the source and CRD file it was checked against.
	Checked map[string]string
	// Unchecked maps "group/Kind" to why it was not checked.
	Unchecked map[string]string
	// Facts holds what was read from each checked kind's CRD.
	Facts map[string]Facts
	Drift []Drift
}

// Check compares every row whose group a source serves with its CRD. Rows of other groups
// are Unchecked; a source that cannot be fetched is an error.
func Check(ctx context.Context, rows []*kinds.KindRow, sources []Source) (Result, error) {
	res := Result{Checked: map[string]string{}, Unchecked: map[string]string{}, Facts: map[string]Facts{}}
	crds := map[string]*CRD{}
	where := map[string]string{}
	groups := map[string]bool{}
	for _, src := range sources {
		dir, err := ModuleDir(ctx, src.Module, src.Version)
		if err != nil {
			return res, err
		}
		got, err := LoadCRDs(dir, src)
		if err != nil {
			return res, err
		}
		for k, c := range got {
			crds[k] = c
			where[k] = src.Module + "@" + src.Version + " " + c.File
		}
		for _, g := range src.Groups {
			groups[g] = true
		}
	}
	for _, row := range rows {
		gk := row.Group + "/" + row.Kind
		if !groups[row.Group] {
			res.Unchecked[gk] = "no source module for group " + row.Group
			continue
		}
		crd, ok := crds[gk]
		if !ok {
			res.Unchecked[gk] = "its module ships no CRD for it"
			continue
		}
		res.Checked[gk] = where[gk]
		drift, facts := Compare(row, crd)
		res.Facts[gk] = facts
		res.Drift = append(res.Drift, drift...)
	}
	return res, nil
}
