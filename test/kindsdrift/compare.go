package kindsdrift

import (
	"context"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// The comparison is the product's (pkg/crdfacts: `webhook serve`, `audit` and the --cluster
// commands compare each built-in row with the CRD the cluster runs); this package reads the
// CRDs the implementations ship in their Go modules and hands them to it.
type (
	// CRD is one CustomResourceDefinition as read from a file.
	CRD = crdfacts.CRD
	// Drift is one fact on which a kind row and its implementation's CRD disagree.
	Drift = crdfacts.Drift
	// Facts are what one CRD version says about a policy kind's targets and references.
	Facts = crdfacts.Facts
)

// Result is the check of every row of a table against a set of sources.
type Result struct {
	// Checked maps "group/Kind" to the source and CRD file it was checked against.
	Checked map[string]string
	// Unchecked maps "group/Kind" to why it was not checked.
	Unchecked map[string]string
	// NoCRD maps "group/Kind" to why no CRD exists to check it against (NoCRD).
	NoCRD map[string]string
	// Facts holds what was read from each checked kind's CRD.
	Facts map[string]Facts
	Drift []Drift
}

// Check compares every row whose group a source serves with its CRD, and every row a fact
// file describes with those facts (the same comparison, crdfacts.CompareKindFacts). Rows of
// other groups are Unchecked, or NoCRD where NoCRD says why none exists; a source that
// cannot be fetched is an error.
func Check(ctx context.Context, rows []*kinds.KindRow, sources []Source, facts []FactFile) (Result, error) {
	res := Result{Checked: map[string]string{}, Unchecked: map[string]string{}, NoCRD: map[string]string{}, Facts: map[string]Facts{}}
	crds := map[string]crdfacts.KindFacts{}
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
			crds[k] = crdfacts.KindFactsOf(c)
			where[k] = src.Module + "@" + src.Version + " " + c.File
		}
		for _, g := range src.Groups {
			groups[g] = true
		}
	}
	for _, f := range facts {
		k := f.Group + "/" + f.Kind
		crds[k] = f.KindFacts
		where[k] = f.Where()
		groups[f.Group] = true
	}
	for _, row := range rows {
		gk := row.Group + "/" + row.Kind
		if why, ok := NoCRD[gk]; ok {
			res.NoCRD[gk] = why
			continue
		}
		if !groups[row.Group] {
			res.Unchecked[gk] = "no source module or fact file for group " + row.Group
			continue
		}
		crd, ok := crds[gk]
		if !ok {
			res.Unchecked[gk] = "its source ships no CRD for it"
			continue
		}
		res.Checked[gk] = where[gk]
		drift, facts := crdfacts.CompareKindFacts(row, crd)
		res.Facts[gk] = facts
		res.Drift = append(res.Drift, drift...)
	}
	return res, nil
}
