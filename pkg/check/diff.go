package check

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// DiffReport is what a change set does to a stored state (`webhook check --diff -o json`):
// the findings it introduces, fixes and leaves unchanged, the context paths whose effective
// settings change, and the policies whose impact status changes.
type DiffReport struct {
	// Enforcement describes the configured modes when they are not all Deny.
	Enforcement []string      `json:"enforcement,omitempty"`
	Introduced  []DiffFinding `json:"introduced"`
	Fixed       []DiffFinding `json:"fixed"`
	Unchanged   []DiffFinding `json:"unchanged"`
	Paths       []PathChange  `json:"paths"`
	Policies    []StatusDiff  `json:"policies"`
	Summary     DiffSummary   `json:"summary"`
	// NotChecked are the kinds of the change set's policies judged without their CRD
	// (check's NotChecked).
	NotChecked []NotChecked `json:"notChecked,omitempty"`
}

// DiffSummary counts what the diff found. Allowed and Denied are check's verdicts on the
// change set's policies.
type DiffSummary struct {
	Allowed    int `json:"allowed"`
	Denied     int `json:"denied"`
	Introduced int `json:"introduced"`
	Fixed      int `json:"fixed"`
	Unchanged  int `json:"unchanged"`
	Paths      int `json:"paths"`
	Policies   int `json:"policies"`
}

// Origins of a finding.
const (
	// OriginCheck: a policy of the change set, judged as `check` judges it (before: the
	// stored policy of its name applied unchanged; after: the change set's version).
	OriginCheck = "check"
	// OriginAudit: a stored policy outside the change set, judged as `audit` judges it,
	// with the warnings about its targets.
	OriginAudit = "audit"
)

// Severities of a finding.
const (
	SeverityDenial  = "denial"
	SeverityRelaxed = "relaxed"
	SeverityWarning = "warning"
)

// DiffFinding is one denial, relaxed denial or warning of one policy.
type DiffFinding struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Origin is "check" (a policy of the change set) or "audit" (a stored policy outside
	// it).
	Origin string `json:"origin"`
	// Severity is "denial" (admission denies it; for origin audit, would deny the stored
	// policy today), "relaxed" (a denial its enforcement mode, Mode, admits) or "warning".
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	Mode     string `json:"mode,omitempty"`
	// Operation, File and Document are the change set's document of the policy (origin
	// check).
	Operation string `json:"operation,omitempty"`
	File      string `json:"file,omitempty"`
	Document  int    `json:"document,omitempty"`

	group string
	// causes are the change set's documents an audit finding is laid at in SARIF: those the
	// policy targets, else the ReferenceGrants in the namespaces it references, else the
	// first document.
	causes []manifests.Document
}

// PathChange is one context path whose effective settings of one kind change: each side in
// explain's shape (null where the path has no effective settings of the kind), and each
// setting that changes.
type PathChange struct {
	Kind     string          `json:"kind"`
	Path     []string        `json:"path"`
	Before   *Effect         `json:"before"`
	After    *Effect         `json:"after"`
	Settings []SettingChange `json:"settings"`
}

// Effect is the effective policy of one kind on one path, as explain prints it.
type Effect struct {
	Effective map[string]any    `json:"effective"`
	Sources   map[string]string `json:"sources"`
}

// SettingChange is one setting whose value or source changes (null on the side that does
// not set it).
type SettingChange struct {
	Name   string   `json:"name"`
	Before *Setting `json:"before"`
	After  *Setting `json:"after"`
}

// Setting is a setting's value and the policy (namespace/name) that supplied it.
type Setting struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// StatusDiff is a policy whose impact status changes; a side is empty where the policy
// does not exist (or the change set's version is denied and never stored).
type StatusDiff struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Before    string `json:"before,omitempty"`
	After     string `json:"after,omitempty"`
}

// Introduces reports whether the change set introduces any finding.
func (r *DiffReport) Introduces() bool { return len(r.Introduced) > 0 }

// Diff compares the stored state before and after docs are applied to it as RunOnto applies
// them (the change set's policies admitted one by one, a denied one not stored).
//
// Findings come from two judges. The change set's policies are judged as check judges
// them: after, the change set's version; before, the stored policy of the same name
// applied unchanged (none for a new policy). Stored policies outside the change set are
// judged as audit judges them, in each state, with the warnings that depend on other
// objects (TargetNotFound, SectionNotFound, SelectsNothing, SelectionNotPermitted). A
// finding is the same on both sides when its policy, severity, mode, reason, field and
// message are. Unchanged findings are listed for the change set's policies and for the
// stored policies the change affects: those whose findings or impact status change, or that
// supply a setting on a path whose effective settings change.
//
// Effective settings are explain's (impact.Explain) over each whole state.
func Diff(stored, docs []manifests.Document, table *kinds.KindTable, config *rules.Config, namespace string) (*DiffReport, error) {
	after, afterSnap, err := runOnto(stored, docs, table, config, namespace)
	if err != nil {
		return nil, err
	}
	changeSet := map[policyID]bool{}
	for _, res := range after.Results {
		changeSet[resultID(res)] = true
	}
	afterView := viewOf(afterSnap, table, config, changeSet, docs)

	// The state before: stored, with the stored policies the change set updates applied
	// again unchanged, so that check judges them as it judges the change set's versions.
	storedPolicies := map[policyID]manifests.Document{}
	for _, d := range stored {
		if id, ok := policyIDOf(d.Object, table); ok {
			storedPolicies[id] = d
		}
	}
	var again []manifests.Document
	seen := map[policyID]bool{}
	for _, res := range after.Results {
		id := resultID(res)
		if d, ok := storedPolicies[id]; ok && !seen[id] {
			seen[id] = true
			again = append(again, manifests.Document{Source: d.Source, Index: d.Index, Object: runtime.DeepCopyJSON(d.Object)})
		}
	}
	before, beforeSnap, err := runOnto(stored, again, table, config, namespace)
	if err != nil {
		return nil, err
	}
	beforeView := viewOf(beforeSnap, table, config, changeSet, nil)

	report := &DiffReport{Enforcement: after.Enforcement, Introduced: []DiffFinding{}, Fixed: []DiffFinding{},
		Unchanged: []DiffFinding{}, NotChecked: after.NotChecked}
	report.addChangeSet(before, after)
	report.Paths = comparePaths(beforeView.explanation, afterView.explanation)
	report.Policies = compareStatuses(beforeView.explanation, afterView.explanation)
	report.addStored(beforeView, afterView)
	report.Summary = DiffSummary{Allowed: after.Summary.Allowed, Denied: after.Summary.Denied,
		Introduced: len(report.Introduced), Fixed: len(report.Fixed), Unchanged: len(report.Unchanged),
		Paths: len(report.Paths), Policies: len(report.Policies)}
	return report, nil
}

// addChangeSet compares the change set's policies, in document order: after, as check
// judged them; before, as check judged the stored policy of each name applied again.
func (r *DiffReport) addChangeSet(before, after *Report) {
	beforeResults := map[policyID]Result{}
	for _, res := range before.Results {
		beforeResults[resultID(res)] = res
	}
	for _, res := range after.Results {
		now := checkFindings(res)
		var was []DiffFinding
		if old, ok := beforeResults[resultID(res)]; ok {
			was = checkFindings(old)
			for i := range was { // the change set's document names the policy on both sides
				was[i].Operation, was[i].File, was[i].Document = res.Operation, res.File, res.Document
			}
		}
		introduced, fixed, unchanged := compareFindings(was, now)
		r.Introduced = append(r.Introduced, introduced...)
		r.Fixed = append(r.Fixed, fixed...)
		r.Unchanged = append(r.Unchanged, unchanged...)
	}
}

// addStored compares the stored policies outside the change set, by kind, namespace and
// name; their unchanged findings are kept for the policies the change affects (r.Paths and
// r.Policies are already compared).
func (r *DiffReport) addStored(before, after stateView) {
	affected := map[string]bool{}
	for _, pc := range r.Paths {
		for _, e := range []*Effect{pc.Before, pc.After} {
			if e != nil {
				for _, src := range e.Sources {
					affected[pc.Kind+" "+src] = true
				}
			}
		}
	}
	for _, s := range r.Policies {
		affected[s.Kind+" "+ref(Result{Namespace: s.Namespace, Name: s.Name})] = true
	}
	var unchangedStored []DiffFinding
	for _, id := range unionIDs(after.order, before.order) {
		introduced, fixed, unchanged := compareFindings(before.findings[id], after.findings[id])
		r.Introduced = append(r.Introduced, introduced...)
		r.Fixed = append(r.Fixed, fixed...)
		if len(introduced) > 0 || len(fixed) > 0 {
			affected[id.kind.Kind+" "+id.ref()] = true
		}
		unchangedStored = append(unchangedStored, unchanged...)
	}
	for _, f := range unchangedStored {
		if affected[f.Kind+" "+ref(Result{Namespace: f.Namespace, Name: f.Name})] {
			r.Unchanged = append(r.Unchanged, f)
		}
	}
}

// policyID names a policy by its group, kind, namespace and name.
type policyID struct {
	kind            schema.GroupKind
	namespace, name string
}

func (id policyID) ref() string { return ref(Result{Namespace: id.namespace, Name: id.name}) }

func resultID(res Result) policyID {
	gv, _ := schema.ParseGroupVersion(res.APIVersion)
	return policyID{schema.GroupKind{Group: gv.Group, Kind: res.Kind}, res.Namespace, res.Name}
}

// policyIDOf names a document when it is a policy of a kind the table knows.
func policyIDOf(obj map[string]any, table *kinds.KindTable) (policyID, bool) {
	gv, err := schema.ParseGroupVersion(stringAt(obj, "apiVersion"))
	if err != nil {
		return policyID{}, false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: stringAt(obj, "kind")}
	if _, ok := table.Lookup(gk); !ok {
		return policyID{}, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	return policyID{gk, stringAt(meta, "namespace"), stringAt(meta, "name")}, true
}

// stateView is what the diff reads of one state: explain's explanation and the findings of
// the stored policies outside the change set.
type stateView struct {
	explanation impact.Explanation
	findings    map[policyID][]DiffFinding
	// order lists the policies with findings.
	order []policyID
}

// viewOf explains snap and judges its policies outside changeSet as audit does, adding the
// warnings about their targets. With docs (the state after), each finding is given the
// documents of the change set it is laid at.
func viewOf(snap *index.Snapshot, table *kinds.KindTable, config *rules.Config, changeSet map[policyID]bool, docs []manifests.Document) stateView {
	v := stateView{explanation: impact.Explain(snap, table, nil), findings: map[policyID][]DiffFinding{}}
	idOf := func(p *policy.Policy) policyID { return policyID{p.GroupKind(), p.Namespace, p.Name} }
	add := func(p *policy.Policy, f DiffFinding) {
		id := idOf(p)
		if _, ok := v.findings[id]; !ok {
			v.order = append(v.order, id)
		}
		f.Kind, f.Namespace, f.Name, f.Origin, f.group = p.Row.Kind, p.Namespace, p.Name, OriginAudit, p.Row.Group
		v.findings[id] = append(v.findings[id], f)
	}
	audited, _ := impact.Audit(snap, config)
	for _, f := range audited {
		if changeSet[idOf(f.Policy)] {
			continue
		}
		for i, d := range denials(f.Denials) {
			severity, mode := SeverityDenial, string(f.Modes[i])
			if f.Modes[i] != rules.Deny && f.Modes[i] != "" {
				severity = SeverityRelaxed
			}
			add(f.Policy, DiffFinding{Severity: severity, Reason: d.Reason, Field: d.Field, Message: d.Message, Mode: mode})
		}
	}
	for _, p := range snap.Policies() {
		if changeSet[idOf(p)] {
			continue
		}
		for _, w := range rules.MissingTargetWarnings(p, snap) {
			reason, _, _ := strings.Cut(w, ":")
			add(p, DiffFinding{Severity: SeverityWarning, Reason: reason, Message: w})
		}
	}
	if len(docs) > 0 {
		where := indexDocs(docs)
		for _, p := range snap.Policies() {
			if list := v.findings[idOf(p)]; len(list) > 0 {
				causes := where.causesOf(snap, p)
				for i := range list {
					list[i].causes = causes
				}
			}
		}
	}
	return v
}

// docIndex finds the change set's documents by object, and its ReferenceGrants by
// namespace, each list in document order: built once per diff, not once per stored policy.
type docIndex struct {
	docs     []manifests.Document
	byObject map[objectID][]int
	grantsIn map[string][]int
}

// objectID names an object by its apiVersion's group, kind, namespace and name.
type objectID struct{ group, kind, namespace, name string }

func indexDocs(docs []manifests.Document) docIndex {
	x := docIndex{docs: docs, byObject: map[objectID][]int{}, grantsIn: map[string][]int{}}
	for i, d := range docs {
		gv, _ := schema.ParseGroupVersion(stringAt(d.Object, "apiVersion"))
		meta, _ := d.Object["metadata"].(map[string]any)
		id := objectID{gv.Group, stringAt(d.Object, "kind"), stringAt(meta, "namespace"), stringAt(meta, "name")}
		x.byObject[id] = append(x.byObject[id], i)
		if id.group == kinds.GatewayGroup && id.kind == "ReferenceGrant" {
			x.grantsIn[id.namespace] = append(x.grantsIn[id.namespace], i)
		}
	}
	return x
}

// causesOf returns the documents of the change set a stored policy's finding is laid at:
// the objects it targets, else the ReferenceGrants in the namespaces its references reach
// into, else the change set's first document.
func (x docIndex) causesOf(snap *index.Snapshot, p *policy.Policy) []manifests.Document {
	var byTarget []int
	seen := map[objectID]bool{}
	for _, t := range topology.AppendTargets(snap, p, nil) {
		id := objectID{t.Key.Group, t.Key.Kind, t.Key.Namespace, t.Key.Name}
		if !seen[id] {
			seen[id] = true
			byTarget = append(byTarget, x.byObject[id]...)
		}
	}
	if len(byTarget) > 0 {
		return x.pick(byTarget)
	}
	var byGrant []int
	reached := map[string]bool{}
	for _, r := range p.TargetRefs {
		if r.HasNamespace && r.Namespace != p.Namespace && !reached[r.Namespace] {
			reached[r.Namespace] = true
			byGrant = append(byGrant, x.grantsIn[r.Namespace]...)
		}
	}
	if len(byGrant) > 0 {
		return x.pick(byGrant)
	}
	if len(x.docs) > 0 {
		return x.docs[:1]
	}
	return nil
}

// pick returns the documents at positions, in document order.
func (x docIndex) pick(positions []int) []manifests.Document {
	slices.Sort(positions)
	out := make([]manifests.Document, 0, len(positions))
	for _, i := range slices.Compact(positions) {
		out = append(out, x.docs[i])
	}
	return out
}

// unionIDs lists the ids of a and b once each, by qualified kind, namespace and name.
func unionIDs(a, b []policyID) []policyID {
	var out []policyID
	in := map[policyID]bool{}
	for _, id := range append(append([]policyID(nil), a...), b...) {
		if !in[id] {
			in[id] = true
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(x, y policyID) int {
		return strings.Compare(kinds.QualifiedKind(x.kind.Group, x.kind.Kind)+"\x00"+x.namespace+"\x00"+x.name,
			kinds.QualifiedKind(y.kind.Group, y.kind.Kind)+"\x00"+y.namespace+"\x00"+y.name)
	})
	return out
}

// checkFindings are a check verdict's denials, relaxed denials and warnings; a Warn
// denial, which check also lists among the warnings, is one relaxed finding.
func checkFindings(res Result) []DiffFinding {
	base := DiffFinding{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name, Origin: OriginCheck,
		Operation: res.Operation, File: res.File, Document: res.Document}
	var out []DiffFinding
	for _, d := range res.Denials {
		f := base
		f.Severity, f.Reason, f.Field, f.Message = SeverityDenial, d.Reason, d.Field, d.Message
		out = append(out, f)
	}
	for _, d := range res.Relaxed {
		f := base
		f.Severity, f.Reason, f.Field, f.Message, f.Mode = SeverityRelaxed, d.Reason, d.Field, d.Message, d.Mode
		out = append(out, f)
	}
	for _, w := range res.Warnings {
		if slices.Contains(res.warnMode, w) {
			continue
		}
		f := base
		reason, _, _ := strings.Cut(w, ":")
		f.Severity, f.Reason, f.Message = SeverityWarning, reason, w
		out = append(out, f)
	}
	return out
}

// findingKey is what makes two findings of one policy the same.
type findingKey struct {
	group, kind, namespace, name, severity, mode, reason, field, message string
}

func keyOf(f DiffFinding) findingKey {
	return findingKey{f.group, f.Kind, f.Namespace, f.Name, f.Severity, f.Mode, f.Reason, f.Field, f.Message}
}

// compareFindings splits one policy's findings: those only after (introduced), only before
// (fixed), on both sides (unchanged, as after has them).
func compareFindings(before, after []DiffFinding) (introduced, fixed, unchanged []DiffFinding) {
	was := map[findingKey]int{}
	for _, f := range before {
		was[keyOf(f)]++
	}
	for _, f := range after {
		if k := keyOf(f); was[k] > 0 {
			was[k]--
			unchanged = append(unchanged, f)
		} else {
			introduced = append(introduced, f)
		}
	}
	for _, f := range before {
		if k := keyOf(f); was[k] > 0 {
			was[k]--
			fixed = append(fixed, f)
		}
	}
	return introduced, fixed, unchanged
}

// comparePaths returns the paths whose effective settings (a value or its source) differ,
// sorted by kind and path.
func comparePaths(before, after impact.Explanation) []PathChange {
	type pathKey struct{ kind, path string }
	was := map[pathKey]impact.PathEffect{}
	for _, p := range before.Paths {
		was[pathKey{p.Kind, strings.Join(p.Path, " > ")}] = p
	}
	out := []PathChange{}
	add := func(kind string, path []string, b, a *impact.PathEffect) {
		settings := compareSettings(b, a)
		if len(settings) == 0 {
			return
		}
		out = append(out, PathChange{Kind: kind, Path: path, Before: effectOf(b), After: effectOf(a), Settings: settings})
	}
	for i := range after.Paths {
		a := &after.Paths[i]
		k := pathKey{a.Kind, strings.Join(a.Path, " > ")}
		if b, ok := was[k]; ok {
			delete(was, k)
			add(a.Kind, a.Path, &b, a)
		} else {
			add(a.Kind, a.Path, nil, a)
		}
	}
	for i := range before.Paths {
		b := &before.Paths[i]
		if _, ok := was[pathKey{b.Kind, strings.Join(b.Path, " > ")}]; ok {
			add(b.Kind, b.Path, b, nil)
		}
	}
	slices.SortStableFunc(out, func(x, y PathChange) int {
		if c := strings.Compare(x.Kind, y.Kind); c != 0 {
			return c
		}
		return strings.Compare(strings.Join(x.Path, " > "), strings.Join(y.Path, " > "))
	})
	return out
}

func effectOf(p *impact.PathEffect) *Effect {
	if p == nil {
		return nil
	}
	return &Effect{Effective: p.Effective, Sources: p.Sources}
}

// compareSettings lists the settings whose value (merge.SameValue: a number read from a
// cluster, int64, and the same number read from a file, float64, are one value) or source
// differs, sorted by name.
func compareSettings(before, after *impact.PathEffect) []SettingChange {
	index := func(p *impact.PathEffect) map[string]merge.Shown {
		m := map[string]merge.Shown{}
		if p != nil {
			for _, s := range p.Settings {
				m[s.Name] = s
			}
		}
		return m
	}
	b, a := index(before), index(after)
	var names []string
	for n := range b {
		names = append(names, n)
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []SettingChange
	for _, n := range names {
		x, inB := b[n]
		y, inA := a[n]
		if inB && inA && x.Source == y.Source && merge.SameValue(x.Value, y.Value) {
			continue
		}
		c := SettingChange{Name: n}
		if inB {
			c.Before = &Setting{Value: x.Value, Source: x.Source}
		}
		if inA {
			c.After = &Setting{Value: y.Value, Source: y.Source}
		}
		out = append(out, c)
	}
	return out
}

// compareStatuses lists the policies whose impact status differs, by kind, namespace and
// name.
func compareStatuses(before, after impact.Explanation) []StatusDiff {
	type key struct{ kind, namespace, name string }
	was := map[key]string{}
	for _, p := range before.Policies {
		was[key{p.Kind, p.Namespace, p.Name}] = p.Status
	}
	now := map[key]string{}
	for _, p := range after.Policies {
		now[key{p.Kind, p.Namespace, p.Name}] = p.Status
	}
	out := []StatusDiff{}
	for k, s := range now {
		if was[k] != s {
			out = append(out, StatusDiff{Kind: k.kind, Namespace: k.namespace, Name: k.name, Before: was[k], After: s})
		}
	}
	for k, s := range was {
		if _, ok := now[k]; !ok {
			out = append(out, StatusDiff{Kind: k.kind, Namespace: k.namespace, Name: k.name, Before: s})
		}
	}
	slices.SortFunc(out, func(x, y StatusDiff) int {
		return strings.Compare(x.Kind+"\x00"+x.Namespace+"\x00"+x.Name, y.Kind+"\x00"+y.Namespace+"\x00"+y.Name)
	})
	return out
}
