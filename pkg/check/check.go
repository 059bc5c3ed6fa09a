// Package check is the offline door to the rules engine: it builds an in-memory snapshot
// from manifests and admits each policy in document order, as the API server would.
package check

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/crdvalidation"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Report is the result of a check run (the `-o json` contract in DESIGN.md).
type Report struct {
	// Enforcement describes the configured modes when they are not all Deny.
	Enforcement []string `json:"enforcement,omitempty"`
	Results     []Result `json:"results"`
	Summary     Summary  `json:"summary"`
	// NotChecked are the policy kinds judged without their CRD, each once.
	NotChecked []NotChecked `json:"notChecked,omitempty"`
	// NotJudged are the kinds whose CRD among the manifests is labelled as a policy kind
	// but whose objects cannot name a target: none of their objects is judged.
	NotJudged []NotChecked `json:"notJudged,omitempty"`
}

// Summary counts verdicts.
type Summary struct {
	Allowed int `json:"allowed"`
	Denied  int `json:"denied"`
	// Relaxed counts allowed policies that Deny would have rejected (Warn or DryRun).
	Relaxed int `json:"relaxed,omitempty"`
}

// Result is the verdict on one policy document.
type Result struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Name       string   `json:"name"`
	Operation  string   `json:"operation"`
	Allowed    bool     `json:"allowed"`
	Denials    []Denial `json:"denials"`
	// Relaxed are denials their enforcement mode (Warn, DryRun) admitted.
	Relaxed     []Denial          `json:"relaxed,omitempty"`
	Warnings    []string          `json:"warnings"`
	Annotations map[string]string `json:"annotations"`
	// Source is where the document came from; shown in text output only. File and
	// Document say the same for CI formats (SARIF, JUnit).
	Source   string `json:"-"`
	File     string `json:"-"`
	Document int    `json:"-"`

	// warnMode are the Warnings that repeat a Warn-mode Relaxed denial
	// (rules.WarnModeWarning), which check --diff counts once, as the relaxed finding.
	warnMode []string
}

// Denial is one field error of a denied policy.
type Denial struct {
	Reason  string `json:"reason"`
	Field   string `json:"field"`
	Message string `json:"message"`
	// Mode is set on relaxed denials: Warn or DryRun.
	Mode string `json:"mode,omitempty"`
}

// epoch is the first creationTimestamp assigned to a document without one. It is fixed so
// that runs are reproducible.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Run admits the policies among docs, one by one, against everything else in docs.
// config (nil for the defaults) decides how each denial is enforced, as in the webhook.
// CustomResourceDefinitions among docs do first what the API server does with them:
// their defaults are applied, and a policy their schema or CEL rules refuse is denied with
// reason Invalid (a non-policy object they refuse is unusable input). The kinds of the
// policies judged without a CRD are the report's NotChecked.
func Run(docs []manifests.Document, table *kinds.KindTable, config *rules.Config) (*Report, error) {
	return RunIn(docs, table, config, "default")
}

// RunIn is Run with the documents that name no namespace in namespace, as `kubectl apply
// -n` puts them.
func RunIn(docs []manifests.Document, table *kinds.KindTable, config *rules.Config, namespace string) (*Report, error) {
	notJudged, err := discoverKinds(docs, table)
	if err != nil {
		return nil, err
	}
	b := newBuilder(table)
	b.namespace = namespace
	if err := b.schemasFrom(docs); err != nil {
		return nil, err
	}
	b.judge = true
	policies, err := b.addAll(docs)
	if err != nil {
		return nil, err
	}
	report := b.admitAll(policies, config)
	report.NotJudged = notJudged
	return report, nil
}

// RunOnto admits the policies among docs, in document order, onto a stored state: stored
// holds the objects and policies a cluster has (every policy in it stored, with its
// creationTimestamp). What a pull request would do if it were merged now: an object in docs
// replaces the stored one of its kind, namespace and name; a policy in docs is a CREATE, or
// an UPDATE of the stored policy of its name (keeping that one's creationTimestamp, as the
// API server does), and one without a creationTimestamp is younger than every stored one.
// Documents that name no namespace are in namespace. CustomResourceDefinitions among
// stored and docs judge docs as in Run (the cluster's objects were admitted already).
func RunOnto(stored, docs []manifests.Document, table *kinds.KindTable, config *rules.Config, namespace string) (*Report, error) {
	report, _, err := runOnto(stored, docs, table, config, namespace)
	return report, err
}

// runOnto is RunOnto, with the state it leaves: the stored one with docs applied.
func runOnto(stored, docs []manifests.Document, table *kinds.KindTable, config *rules.Config, namespace string) (*Report, *index.Snapshot, error) {
	notJudged, err := discoverKinds(append(append([]manifests.Document{}, stored...), docs...), table)
	if err != nil {
		return nil, nil, err
	}
	b := newBuilder(table)
	for _, set := range [][]manifests.Document{stored, docs} {
		if err := b.schemasFrom(set); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range stored {
		pd, err := b.add(d)
		if err != nil {
			return nil, nil, err
		}
		if pd != nil {
			b.store(pd)
		}
	}
	b.namespace = namespace
	b.judge = true
	policies, err := b.addAll(docs)
	if err != nil {
		return nil, nil, err
	}
	report := b.admitAll(policies, config)
	report.NotJudged = notJudged
	return report, b.snap, nil
}

// admitAll judges policies in order against the snapshot, storing each one admitted: first
// as the API server does before any webhook (its CRD, when given), then by the rules.
func (b *builder) admitAll(policies []pendingPolicy, config *rules.Config) *Report {
	snap := b.snap
	report := &Report{Results: []Result{}}
	if config.Relaxes() {
		report.Enforcement = config.Describe()
	}
	for _, pd := range policies {
		old := b.stored[objectKey(pd.doc.Object)]
		if !b.schemas.Knows(pd.row.GroupKind()) {
			report.NotChecked = addNotChecked(report.NotChecked, pd.row.GroupKind())
		}
		refusal, err := b.schemas.Admit(context.Background(), pd.doc.Object, old)
		p := policy.NewPolicy(pd.row, pd.doc.Object)
		req := rules.Request{Operation: rules.Create, Policy: p, Config: config}
		if old, ok := snap.GetPolicy(p.GroupKind(), p.Namespace, p.Name); ok {
			req.Operation, req.OldPolicy = rules.Update, old
			p.Created = old.Created // creationTimestamp does not change on update
		}
		res := Result{
			APIVersion: stringAt(pd.doc.Object, "apiVersion"), Kind: pd.row.Kind,
			Namespace: p.Namespace, Name: p.Name, Operation: string(req.Operation),
			Annotations: map[string]string{}, Warnings: []string{},
			Source: pd.doc.Where(), File: pd.doc.Source, Document: pd.doc.Index,
		}
		switch {
		case err != nil:
			res.Denials = []Denial{{Reason: crdvalidation.Reason, Message: err.Error()}}
		case refusal != nil:
			res.Denials = refusalDenials(refusal)
		default:
			v := rules.Evaluate(req, snap)
			res.Allowed, res.Denials, res.Relaxed = v.Allowed(), denials(v.Denials), relaxed(v.Relaxed)
			for _, r := range v.Relaxed {
				if r.Mode == rules.Warn {
					res.warnMode = append(res.warnMode, rules.WarnModeWarning(r.Error))
				}
			}
			if v.Warnings != nil {
				res.Warnings = v.Warnings
			}
		}
		if res.Allowed {
			b.stored[objectKey(pd.doc.Object)] = pd.doc.Object
			annotate(res.Annotations, snap, snap.PutPolicy(p), config.MessagesOrNil())
			report.Summary.Allowed++
			if len(res.Relaxed) > 0 {
				report.Summary.Relaxed++
			}
		} else {
			report.Summary.Denied++
		}
		report.Results = append(report.Results, res)
	}
	return report
}

// refusalDenials are the API server's causes of a refusal by a CRD, one per field.
func refusalDenials(r *crdvalidation.Refusal) []Denial {
	var out []Denial
	for _, path := range r.Unknown {
		out = append(out, Denial{Reason: crdvalidation.Reason, Field: path, Message: crdvalidation.StrictDecodingMessage([]string{path})})
	}
	for _, e := range r.Errors {
		out = append(out, Denial{Reason: crdvalidation.Reason, Field: e.Field, Message: e.ErrorBody()})
	}
	return out
}

// State returns the state the manifests describe: every object and every policy, as if
// all were stored (for example, created before the webhook was installed). Later
// documents replace earlier ones of the same kind, namespace and name.
func State(docs []manifests.Document, table *kinds.KindTable) (*index.Snapshot, error) {
	s, err := StateOf(docs, table)
	if err != nil {
		return nil, err
	}
	return s.Snapshot(), nil
}

// StateOf is State's builder, its policies not yet stored (Audit, or Snapshot). The
// CustomResourceDefinitions among docs judge the others, as the API server would before
// storing them (StateBuilder.Judge).
func StateOf(docs []manifests.Document, table *kinds.KindTable) (*StateBuilder, error) {
	s := NewStateBuilder(table)
	if err := s.Discover(docs); err != nil {
		return nil, err
	}
	s.Judge(nil)
	if err := s.Add(docs); err != nil {
		return nil, err
	}
	return s, nil
}

type pendingPolicy struct {
	doc manifests.Document
	row *kinds.KindRow
}

// load discovers policy kinds, assigns creation timestamps and namespaces, stores every
// non-policy object in a new snapshot, and returns the policy documents in order.
func load(docs []manifests.Document, table *kinds.KindTable) (*index.Snapshot, []pendingPolicy, error) {
	if _, err := discoverKinds(docs, table); err != nil {
		return nil, nil, err
	}
	b := newBuilder(table)
	policies, err := b.addAll(docs)
	if err != nil {
		return nil, nil, err
	}
	return b.snap, policies, nil
}

// StateFromFiles is State for manifests too large to hold at once (`serve
// --snapshot-from`): files are read twice, once to discover policy kinds and once to
// build, and each file's documents are dropped once stored.
func StateFromFiles(paths []string, table *kinds.KindTable) (*index.Snapshot, int, error) {
	err := manifests.Walk(paths, nil, manifests.Options{Recursive: true}, func(docs []manifests.Document) error {
		_, err := discoverKinds(docs, table)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	b := newBuilder(table)
	count := 0
	err = manifests.Walk(paths, nil, manifests.Options{Recursive: true}, func(docs []manifests.Document) error {
		for _, d := range docs {
			pd, err := b.add(d)
			if err != nil {
				return err
			}
			if pd != nil {
				b.snap.PutPolicy(policy.NewPolicy(pd.row, pd.doc.Object))
			}
		}
		count += len(docs)
		return nil
	})
	return b.snap, count, err
}

// builder stores documents one by one, assigning creation timestamps in document order.
type builder struct {
	table *kinds.KindTable
	snap  *index.Snapshot
	last  time.Time
	// namespace is given to namespaced documents that name none.
	namespace string
	// schemas are the CRDs given; with judge, a non-policy document their kind's CRD
	// refuses is unusable input (the cluster would not hold it), and with judgePolicies a
	// policy document too (a state, not a verdict, is being built).
	schemas              *crdvalidation.Schemas
	judge, judgePolicies bool
	// onRefused, when set, is told of each document its CRD refuses, which is then left
	// out instead of failing the build.
	onRefused func(where string, refusal *crdvalidation.Refusal)
	// stored are the policies stored so far, as the API server holds them: an update's old
	// object, for the CRD's ratcheting and transition rules.
	stored map[string]map[string]any
}

func newBuilder(table *kinds.KindTable) *builder {
	return &builder{table: table, snap: index.New(), last: epoch, namespace: "default",
		schemas: crdvalidation.New(), stored: map[string]map[string]any{}}
}

// schemasFrom keeps the CustomResourceDefinitions among docs as the API server's first
// judge of the documents added after them.
func (b *builder) schemasFrom(docs []manifests.Document) error {
	for _, d := range docs {
		if stringAt(d.Object, "kind") != "CustomResourceDefinition" || !strings.HasPrefix(stringAt(d.Object, "apiVersion"), "apiextensions.k8s.io/") {
			continue
		}
		if err := b.schemas.Add(d.Object); err != nil {
			return &manifests.InputError{Msg: fmt.Sprintf("%s: %v", d.Where(), err)}
		}
	}
	return nil
}

// store puts a policy in the snapshot as stored.
func (b *builder) store(pd *pendingPolicy) {
	b.snap.PutPolicy(policy.NewPolicy(pd.row, pd.doc.Object))
	b.stored[objectKey(pd.doc.Object)] = pd.doc.Object
}

// objectKey names an object by apiVersion's group, kind, namespace and name.
func objectKey(obj map[string]any) string {
	gv, _ := schema.ParseGroupVersion(stringAt(obj, "apiVersion"))
	meta, _ := obj["metadata"].(map[string]any)
	return gv.Group + "/" + stringAt(obj, "kind") + "/" + stringAt(meta, "namespace") + "/" + stringAt(meta, "name")
}

// addAll stores the non-policy documents and returns the policy documents, in order.
func (b *builder) addAll(docs []manifests.Document) ([]pendingPolicy, error) {
	steps := make([]step, len(docs))
	for i, d := range docs {
		if err := b.prepare(d, &steps[i]); err != nil {
			return nil, err
		}
	}
	b.judgeAll(docs, steps)
	var policies []pendingPolicy
	for i, d := range docs {
		pd, err := b.finish(d, &steps[i])
		if err != nil {
			return nil, err
		}
		if pd != nil {
			policies = append(policies, *pd)
		}
	}
	return policies, nil
}

// add stores a non-policy document, or returns a policy document for the caller to admit.
func (b *builder) add(d manifests.Document) (*pendingPolicy, error) {
	var st step
	if err := b.prepare(d, &st); err != nil {
		return nil, err
	}
	b.judgeAll([]manifests.Document{d}, []step{st})
	return b.finish(d, &st)
}

// step is one document on its way into the snapshot.
type step struct {
	gk  schema.GroupKind
	row *kinds.KindRow // its row, when a policy
	// judge: the document goes through its CRD; refusal is its answer.
	judge   bool
	refusal *crdvalidation.Refusal
	err     error
}

// prepare reads a document's kind and gives it what the API server would (a
// creationTimestamp in document order, the default namespace).
func (b *builder) prepare(d manifests.Document, st *step) error {
	gv, err := schema.ParseGroupVersion(stringAt(d.Object, "apiVersion"))
	if err != nil {
		return &manifests.InputError{Msg: fmt.Sprintf("%s: %v", d.Where(), err)}
	}
	kind := stringAt(d.Object, "kind")
	st.gk = schema.GroupKind{Group: gv.Group, Kind: kind}
	b.last = assignCreationTimestamp(d.Object, b.last)

	if row, ok := b.table.Lookup(st.gk); ok {
		if !row.ServesVersion(gv.Version) {
			return &manifests.InputError{Msg: fmt.Sprintf("%s: %s is not served at %s; known versions: %s",
				d.Where(), kind, gv.String(), strings.Join(row.Versions, ", "))}
		}
		defaultNamespace(d.Object, row.Scope == kinds.Namespaced, b.namespace)
		st.row, st.judge = row, b.judgePolicies && b.schemas.Knows(st.gk)
		return nil
	}
	if known, served := kinds.ServedVersion(gv.Group, gv.Version); known && !served {
		return &manifests.InputError{Msg: fmt.Sprintf("%s: unknown apiVersion %q for %s", d.Where(), gv.String(), kind)}
	}
	defaultNamespace(d.Object, kinds.IsNamespacedResource(st.gk), b.namespace)
	st.judge = b.judge && b.schemas.Knows(st.gk)
	return nil
}

// judgeAll runs the documents to judge through their CRDs, on every core: the API server's
// CEL rules cost milliseconds for a route of ten rules, and each document is judged alone.
func (b *builder) judgeAll(docs []manifests.Document, steps []step) {
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1)) - 1; i < len(docs); i = int(next.Add(1)) - 1 {
			if steps[i].judge {
				steps[i].refusal, steps[i].err = b.schemas.Admit(context.Background(), docs[i].Object, nil)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// finish stores a non-policy document, or returns a policy document for the caller to
// admit. A document its CRD refuses is unusable input, unless the builder skips refused
// documents (onRefused), as a cluster would not hold them.
func (b *builder) finish(d manifests.Document, st *step) (*pendingPolicy, error) {
	switch {
	case st.err != nil:
		return nil, &manifests.InputError{Msg: fmt.Sprintf("%s: %v", d.Where(), st.err)}
	case st.refusal != nil && b.onRefused != nil:
		b.onRefused(d.Where(), st.refusal)
		return nil, nil
	case st.refusal != nil:
		return nil, &manifests.InputError{Msg: fmt.Sprintf("%s: the API server would refuse it: %v", d.Where(), st.refusal)}
	}
	if st.row != nil {
		return &pendingPolicy{d, st.row}, nil
	}
	if _, err := b.snap.AddResource(st.gk, d.Object); err != nil {
		return nil, &manifests.InputError{Msg: fmt.Sprintf("%s: %v", d.Where(), err)}
	}
	return nil, nil
}

// annotate predicts the impact of a just-admitted policy, as the mutating webhook writes it.
func annotate(annotations map[string]string, snap *index.Snapshot, p *policy.Policy, msgs *validation.Messages) {
	im := impact.Predict(snap, p, nil).ForAnnotation(p, msgs)
	data, err := json.Marshal(im)
	if err != nil {
		return // an Impact always marshals; nothing to annotate otherwise
	}
	annotations[impact.AnnotationImpact] = string(data)
	annotations[impact.AnnotationImpactSummary] = im.AnnotatedSummary(p, msgs)
}

func denials(errs field.ErrorList) []Denial {
	out := make([]Denial, 0, len(errs))
	for _, e := range errs {
		out = append(out, Denial{Reason: validation.ReasonOf(e), Field: e.Field, Message: e.ErrorBody()})
	}
	return out
}

func relaxed(list []rules.Relaxed) []Denial {
	var out []Denial
	for _, r := range list {
		out = append(out, Denial{Reason: validation.ReasonOf(r.Error), Field: r.Error.Field, Message: r.Error.ErrorBody(), Mode: string(r.Mode)})
	}
	return out
}

// discoverKinds adds a generic row for every CRD in docs labelled as a policy kind that the
// table does not already describe (built-in and configured rows are more precise). A
// labelled CRD whose objects cannot name a target (kinds.CRDRow.Targetless) gets none: its
// objects attach to nothing, so they are no policies to judge; it is returned instead.
func discoverKinds(docs []manifests.Document, table *kinds.KindTable) ([]NotChecked, error) {
	var notJudged []NotChecked
	for _, d := range docs {
		if stringAt(d.Object, "kind") != "CustomResourceDefinition" {
			continue
		}
		found, labelled, err := kinds.RowFromCRD(d.Object)
		if !labelled {
			continue
		}
		if err == nil {
			if _, ok := table.Lookup(found.Row.GroupKind()); ok {
				continue
			}
			if found.Targetless {
				notJudged = addTargetless(notJudged, found.Row.GroupKind())
				continue
			}
			err = table.Put(found.Row)
		}
		if err != nil {
			return nil, &manifests.InputError{Msg: fmt.Sprintf("%s: %v", d.Where(), err)}
		}
	}
	return notJudged, nil
}

// assignCreationTimestamp gives a document without creationTimestamp one second after the
// previous document's, so GEP-713's "older is higher" follows document order.
func assignCreationTimestamp(obj map[string]any, last time.Time) time.Time {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	if s, ok := meta["creationTimestamp"].(string); ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			if t.After(last) {
				return t
			}
			return last
		}
	}
	t := last.Add(time.Second)
	meta["creationTimestamp"] = t.Format(time.RFC3339)
	return t
}

func defaultNamespace(obj map[string]any, namespaced bool, namespace string) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return
	}
	if ns, _ := meta["namespace"].(string); ns == "" && namespaced {
		meta["namespace"] = namespace
	}
}

func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
