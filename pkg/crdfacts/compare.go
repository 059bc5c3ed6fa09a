package crdfacts

import (
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
	return CompareKindFacts(row, KindFactsOf(crd))
}

// CompareKindFacts is Compare over the facts read from a CRD (KindFactsOf) instead of the
// CRD: rows are compared with kept facts exactly as with a CRD.
func CompareKindFacts(row *kinds.KindRow, crd KindFacts) ([]Drift, Facts) {
	out := compareServed(row, crd)
	seen := map[string]bool{}
	for _, d := range out {
		seen[d.Key()] = true
	}
	var facts Facts
	inSome := map[string]bool{} // reference paths some version has
	for i, v := range compareVersions(row, crd) {
		if i == 0 {
			facts = v.facts
		}
		for _, r := range v.facts.References {
			inSome[r.Path] = true
		}
		for _, d := range v.drift {
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

// compareServed lists the versions the CRD serves and the row does not list, and those the
// row lists and the CRD does not serve.
func compareServed(row *kinds.KindRow, crd KindFacts) []Drift {
	gk := row.Group + "/" + row.Kind
	var out []Drift
	for _, v := range crd.Served {
		if len(row.Versions) > 0 && !slices.Contains(row.Versions, v) {
			out = append(out, Drift{Kind: gk, Fact: kinds.FactVersions, Item: v, Row: "does not list it", CRD: "serves it"})
		}
	}
	for _, v := range row.Versions {
		if !slices.Contains(crd.Served, v) {
			out = append(out, Drift{Kind: gk, Fact: kinds.FactVersions, Item: v, Row: "lists it", CRD: "does not serve it"})
		}
	}
	return out
}

// versionDrift is where a row contradicts one CRD version, and that version's facts.
type versionDrift struct {
	facts Facts
	drift []Drift
}

// compareVersions reads every version the row lists and the CRD serves, the primary one
// (the storage version, else the row's last) first.
func compareVersions(row *kinds.KindRow, crd KindFacts) []versionDrift {
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
	out := make([]versionDrift, 0, len(versions))
	for _, v := range versions {
		f := crd.At(v)
		out = append(out, versionDrift{facts: f, drift: compareFacts(row, f)})
	}
	return out
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
			add(kinds.FactMaxTargetRefs, "", limit(rowMax), limit(crdMax))
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
				add(kinds.FactTargetKinds, k, "does not admit it", "admits it")
			}
		}
		for _, k := range keys(rowKinds) {
			if !slices.Contains(f.TargetKinds, k) {
				add(kinds.FactTargetKinds, k, "admits it", "refuses it")
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
		if rowKinds, ok := row.FieldTargetKinds(field); ok {
			if !sameSet(ks, rowKinds) {
				add(kinds.FactFieldTargetKinds, field, fmt.Sprintf("only %v", rowKinds), fmt.Sprintf("only %v", ks))
			}
			continue
		}
		add(kinds.FactFieldTargetKinds, field, "no rule", fmt.Sprintf("only %v", ks))
	}
	// A CRD that describes no target field (a schemaless spec) says nothing of the rules.
	if len(f.TargetRefFields) > 0 {
		for _, field := range ruledFields(row) {
			if f.FieldTargetKinds[field] == nil {
				rowKinds, _ := row.FieldTargetKinds(field)
				add(kinds.FactFieldTargetKinds, field, fmt.Sprintf("only %v", rowKinds), "no rule")
			}
		}
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
				add(kinds.FactReferenceKinds, r.Path+" "+k, "refuses it", "admits it")
			}
		}
		for _, k := range listed.Kinds {
			if !slices.Contains(r.Kinds, k) {
				add(kinds.FactReferenceKinds, r.Path+" "+k, "admits it", "refuses it")
			}
		}
	}
	for _, r := range row.References {
		// A NameNamespace reference (a name and a namespace, its kind fixed by the field) has
		// no kind field, so FactsOf does not find it: nothing to compare it with.
		if !crdRefs[r.Path] && r.Shape != kinds.NameNamespaceShape {
			add("reference", r.Path, "lists it", "has no reference-shaped field there")
		}
	}
	return out
}

// ruledFields are the spec fields the row ties to some target kinds: its strategy field
// (when Strategy.TargetKinds is set), then its FieldTargets.
func ruledFields(row *kinds.KindRow) []string {
	var out []string
	if row.Strategy.Field != "" && len(row.Strategy.TargetKinds) > 0 {
		out = append(out, row.Strategy.Field)
	}
	for _, ft := range row.FieldTargets {
		out = append(out, ft.Field)
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
