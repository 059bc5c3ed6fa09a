package crdfacts

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Derive returns the row a policy kind is judged by on a cluster that runs crd: base where
// crd is as strict or stricter (the API server refuses first), crd's facts where it admits
// more (a row stricter than the installed release must never block a write): the versions
// it serves, its targetRefs maxItems (larger, or none), the target kinds its enums and CEL
// rules admit, the target kinds its rule on the row's strategy field admits (or no rule),
// the kinds its reference fields admit. Every version the row lists and crd serves is read;
// the widest wins. The derived row's Installed holds crd's name and release, every drift
// (those it follows marked Widened) and base.
func Derive(base *kinds.KindRow, crd *CRD) kinds.KindRow {
	if base.Installed != nil {
		base = base.Installed.Base // derived before, from an earlier state of the CRD
	}
	row := clone(base)
	drift, _ := Compare(base, crd)
	d := deriver{base: base, row: &row, widened: map[string]Drift{}, maxItems: -1}
	for _, x := range drift {
		if x.Fact == kinds.FactVersions && x.Row == "does not list it" {
			row.Versions = append(row.Versions, x.Item)
			d.widened[x.Key()] = x
		}
	}
	// Every version the CRD serves is read, the versions the row did not list too: a policy
	// may be written at any of them.
	for _, v := range compareVersions(&row, KindFactsOf(crd)) {
		for _, x := range v.drift {
			d.widen(x, v.facts)
		}
	}
	d.finish()

	installed := &kinds.InstalledCRD{Name: crd.Name, Release: crd.Release, Base: base}
	done := map[string]bool{}
	for _, x := range drift {
		w, ok := d.widened[x.Key()]
		if ok {
			x = w
			done[x.Key()] = true
		}
		installed.Drift = append(installed.Drift, kinds.CRDDrift{Fact: x.Fact, Item: x.Item, Row: x.Row, CRD: x.CRD, Widened: ok})
	}
	// A widening the primary version did not show (another served version admits more).
	for _, key := range slices.Sorted(maps.Keys(d.widened)) {
		if x := d.widened[key]; !done[key] {
			installed.Drift = append(installed.Drift, kinds.CRDDrift{Fact: x.Fact, Item: x.Item, Row: x.Row, CRD: x.CRD, Widened: true})
		}
	}
	row.Installed = installed
	return row
}

// deriver widens a row, one drift of one CRD version at a time.
type deriver struct {
	base    *kinds.KindRow
	row     *kinds.KindRow
	widened map[string]Drift
	// maxItems is the widest targetRefs limit a version has that is wider than the row's
	// (0: a version sets none); -1 while none is wider.
	maxItems int
	// fields are, for each field the row ties to target kinds (its strategy field, its
	// FieldTargets), how the versions widen the rule.
	fields map[string]*fieldWidening
}

// fieldWidening is how the CRD's versions widen the row's rule on one field: the target
// kinds they admit beyond the row's, or no rule at all.
type fieldWidening struct {
	kinds  []string
	noRule bool
	drift  Drift
}

func (d *deriver) widen(x Drift, f Facts) {
	switch x.Fact {
	case kinds.FactTargetKinds:
		if x.Row != "does not admit it" {
			return
		}
		d.addTarget(x.Item, f.TargetGroups)
	case kinds.FactMaxTargetRefs:
		rowMax, crdMax := RowMaxTargetRefs(d.base), f.MaxTargetRefs
		if rowMax == 0 || (crdMax != 0 && crdMax <= rowMax) || d.maxItems == 0 {
			return // the CRD is as strict or stricter, or a version already sets no limit
		}
		d.maxItems = max(d.maxItems, crdMax)
		if crdMax == 0 {
			d.maxItems = 0
		}
		return // recorded once the widest is known (finish)
	case kinds.FactFieldTargetKinds:
		base, ok := d.base.FieldTargetKinds(x.Item)
		if !ok {
			return // a rule the row lacks: the row is the wider already
		}
		if d.fields == nil {
			d.fields = map[string]*fieldWidening{}
		}
		w := d.fields[x.Item]
		if w == nil {
			w = &fieldWidening{}
			d.fields[x.Item] = w
		}
		ks, ruled := f.FieldTargetKinds[x.Item]
		if !ruled {
			w.noRule = true
		}
		for _, k := range ks {
			if !slices.Contains(base, k) && !slices.Contains(w.kinds, k) {
				w.kinds = append(w.kinds, k)
			}
		}
		w.drift = x
		return // recorded in finish
	case kinds.FactReferenceKinds:
		path, kind, _ := strings.Cut(x.Item, " ")
		if x.Row != "refuses it" {
			return
		}
		for i := range d.row.References {
			if r := &d.row.References[i]; r.Path == path && len(r.Kinds) > 0 && !slices.Contains(r.Kinds, kind) {
				r.Kinds = append(r.Kinds, kind)
			}
		}
	default:
		return
	}
	if _, ok := d.widened[x.Key()]; !ok {
		d.widened[x.Key()] = x
	}
}

// addTarget lets the row target kind in the groups the CRD admits where the webhook knows
// the kind there, else in all of them; where the CRD restricts no group, in the groups the
// webhook knows the kind in, else in the row's own.
func (d *deriver) addTarget(kind string, crdGroups []string) {
	var known []string
	for _, t := range kinds.TargetKinds() {
		if t.Kind == kind && (crdGroups == nil || slices.Contains(crdGroups, t.Group)) {
			known = append(known, t.Group)
		}
	}
	groups := known
	switch {
	case len(groups) > 0:
	case crdGroups != nil:
		groups = crdGroups
	default:
		for _, t := range d.base.Targets {
			if !slices.Contains(groups, t.Group) {
				groups = append(groups, t.Group)
			}
		}
	}
	for _, g := range groups {
		if _, ok := d.row.Target(g, kind); ok {
			continue
		}
		info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: g, Kind: kind})
		d.row.Targets = append(d.row.Targets, kinds.TargetKind{Group: g, Kind: kind, Section: info.Section})
	}
}

// finish records the widenings that take every version to know: targetRefs' limit and the
// strategy field's target kinds.
func (d *deriver) finish() {
	gk := d.base.Group + "/" + d.base.Kind
	if d.maxItems >= 0 {
		d.row.MaxTargetRefs = d.maxItems
		x := Drift{Kind: gk, Fact: kinds.FactMaxTargetRefs, Row: limit(RowMaxTargetRefs(d.base)), CRD: limit(d.maxItems)}
		d.widened[x.Key()] = x
	}
	for _, field := range slices.Sorted(maps.Keys(d.fields)) {
		w := d.fields[field]
		base, _ := d.base.FieldTargetKinds(field)
		x := w.drift
		switch {
		case w.noRule:
			d.setFieldTargetKinds(field, nil)
			x.Row, x.CRD = fmt.Sprintf("only %v", base), "no rule"
		case len(w.kinds) > 0:
			widened := append(slices.Clone(base), w.kinds...)
			d.setFieldTargetKinds(field, widened)
			for _, k := range w.kinds {
				if !slices.ContainsFunc(d.row.Targets, func(t kinds.TargetKind) bool { return t.Kind == k }) {
					d.addTarget(k, nil) // a field's target kind is a target kind (validateRow)
				}
			}
			x.Row, x.CRD = fmt.Sprintf("only %v", base), fmt.Sprintf("only %v", widened)
		default:
			continue
		}
		d.widened[x.Key()] = x
	}
}

// setFieldTargetKinds replaces the row's rule on field: the strategy field's, or its
// FieldTargets entry (removed when ks is nil: no rule).
func (d *deriver) setFieldTargetKinds(field string, ks []string) {
	if field == d.row.Strategy.Field {
		d.row.Strategy.TargetKinds = ks
		return
	}
	d.row.FieldTargets = slices.DeleteFunc(d.row.FieldTargets, func(ft kinds.FieldTarget) bool { return ft.Field == field && ks == nil })
	for i := range d.row.FieldTargets {
		if d.row.FieldTargets[i].Field == field {
			d.row.FieldTargets[i].TargetKinds = ks
		}
	}
}

// clone copies a row deeply enough that widening the copy leaves base as it is.
func clone(base *kinds.KindRow) kinds.KindRow {
	row := *base
	row.Versions = slices.Clone(base.Versions)
	row.Targets = slices.Clone(base.Targets)
	row.Strategy.TargetKinds = slices.Clone(base.Strategy.TargetKinds)
	row.FieldTargets = slices.Clone(base.FieldTargets)
	for i := range row.FieldTargets {
		row.FieldTargets[i].TargetKinds = slices.Clone(base.FieldTargets[i].TargetKinds)
	}
	row.References = slices.Clone(base.References)
	for i := range row.References {
		row.References[i].Kinds = slices.Clone(base.References[i].Kinds)
	}
	return row
}
