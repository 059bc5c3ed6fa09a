package oracle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Verdict is both sides' judgement of one policy of a scenario.
type Verdict struct {
	Policy string // "Kind namespace/name"
	// GatewayAPI says the kind is Gateway API's own (BackendTLSPolicy), on which Envoy
	// Gateway writes statuses differently from its own kinds.
	GatewayAPI bool
	Shape      string // what it targets, e.g. "Gateway/section+HTTPRoute@both"
	// Reach says whether its targetRefs hang from another implementation's Gateways.
	Reach Reach
	// Ours: allowed, the reasons of our denial, and (when allowed) our impact status over
	// the final state.
	Allowed  bool
	Reasons  []string
	Warnings []string
	Status   string
	// SelfOverlap says the policy names both an object and a section of it.
	SelfOverlap bool
	// WouldBe is, for a policy we denied, our impact status had it been admitted.
	WouldBe string
	// EG is the translator's status: for a policy we admitted, in the state of everything
	// we admitted; for one we denied, in the state of what we admitted before it, plus it.
	EG EGStatus
}

// Outcome is one scenario judged by both sides.
type Outcome struct {
	Scenario *Scenario
	Verdicts []Verdict
	// Refused is set when Envoy Gateway's loader refused the input as a whole (a document
	// its CRDs' schema rejects): the generator wrote something the API server would refuse.
	Refused error
}

// Translating is what Judge asks of Envoy Gateway's translator (a *Translator; tests
// without egctl stand in for it).
type Translating interface {
	Translate(ctx context.Context, manifest []byte) (map[string]EGStatus, error)
}

// Judge judges every policy of s by the webhook's engine (admitting in creation order, as
// a cluster with the webhook would) and by Envoy Gateway's translator.
func Judge(ctx context.Context, t Translating, s *Scenario) (*Outcome, error) {
	out := &Outcome{Scenario: s}
	ours, err := admit(s.Objects, s.Policies)
	if err != nil {
		return nil, fmt.Errorf("%s: check: %v", s.Name(), err)
	}
	var admitted []Object
	for i, p := range s.Policies {
		if ours.Results[i].Allowed {
			admitted = append(admitted, p)
		}
	}
	statuses, err := impactStatuses(s.Objects, admitted)
	if err != nil {
		return nil, fmt.Errorf("%s: explain: %v", s.Name(), err)
	}
	manifest, err := YAML(s.Objects, admitted)
	if err != nil {
		return nil, err
	}
	final, err := t.Translate(ctx, manifest)
	if refused := (*InputRefused)(nil); errors.As(err, &refused) {
		out.Refused = err
		return out, nil
	} else if err != nil {
		return nil, fmt.Errorf("%s: %v", s.Name(), err)
	}
	var before []Object
	for i, p := range s.Policies {
		res := ours.Results[i]
		k := key(res.Kind, res.Namespace, res.Name)
		v := Verdict{Policy: k, Shape: shape(p, s.Objects), Reach: reachOf(p, s.Objects), Allowed: res.Allowed, Warnings: res.Warnings, SelfOverlap: selfOverlap(p, s.Objects),
			GatewayAPI: strings.HasPrefix(res.APIVersion, gatewayGroup+"/")}
		for _, d := range res.Denials {
			v.Reasons = append(v.Reasons, d.Reason)
		}
		if res.Allowed {
			v.Status, v.EG = statuses[k], statusOf(final, k)
			before = append(before, p)
		} else {
			m, err := YAML(s.Objects, append(append([]Object{}, before...), p))
			if err != nil {
				return nil, err
			}
			would, err := impactStatuses(s.Objects, append(append([]Object{}, before...), p))
			if err != nil {
				return nil, fmt.Errorf("%s: explain: %v", s.Name(), err)
			}
			v.WouldBe = would[k]
			alone, err := t.Translate(ctx, m)
			if refused := (*InputRefused)(nil); errors.As(err, &refused) {
				out.Refused = err
				return out, nil
			} else if err != nil {
				return nil, fmt.Errorf("%s: %v", s.Name(), err)
			}
			v.EG = statusOf(alone, k)
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	return out, nil
}

// statusOf is the translator's status of policy k: a policy its output leaves out (one
// whose selectors match nothing) has none.
func statusOf(statuses map[string]EGStatus, k string) EGStatus {
	if s, ok := statuses[k]; ok {
		return s
	}
	return EGStatus{Verdict: "NoStatus"}
}

// admit runs the offline door on the objects and policies, in creation order.
func admit(objects, policies []Object) (*check.Report, error) {
	docs, err := decode(objects, policies)
	if err != nil {
		return nil, err
	}
	return check.Run(docs, kinds.BuiltinKindTable(), nil)
}

// impactStatuses is explain's status of every policy over objects and policies.
func impactStatuses(objects, policies []Object) (map[string]string, error) {
	docs, err := decode(objects, policies)
	if err != nil {
		return nil, err
	}
	table := kinds.BuiltinKindTable()
	snap, err := check.State(docs, table)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range impact.Explain(snap, table, nil).Policies {
		out[key(p.Kind, p.Namespace, p.Name)] = p.Status
	}
	return out, nil
}

func decode(objects, policies []Object) ([]manifests.Document, error) {
	b, err := YAML(objects, policies)
	if err != nil {
		return nil, err
	}
	return manifests.Decode("scenario", b)
}

// selfOverlap reports whether a policy's targetRefs name an object both whole and below it:
// by a section of it, or (a Gateway) through one of its ListenerSets.
func selfOverlap(p Object, objects []Object) bool {
	parentOf := map[string]string{} // ListenerSet name -> its Gateway's
	for _, o := range objects {
		if o["kind"] == "ListenerSet" {
			spec, _ := o["spec"].(Object)
			parent, _ := spec["parentRef"].(Object)
			meta, _ := o["metadata"].(Object)
			parentOf[fmt.Sprint("ListenerSet/", meta["name"])] = fmt.Sprint("Gateway/", parent["name"])
		}
	}
	spec, _ := p["spec"].(Object)
	refs, _ := spec["targetRefs"].([]any)
	whole, below := map[string]bool{}, map[string]bool{}
	for _, r := range refs {
		ref, _ := r.(Object)
		k := fmt.Sprint(ref["kind"], "/", ref["name"])
		if _, ok := ref["sectionName"]; ok {
			below[k] = true
		} else {
			whole[k] = true
		}
		if gw, ok := parentOf[k]; ok {
			below[gw] = true
		}
	}
	for k := range below {
		if whole[k] {
			return true
		}
	}
	return false
}

// shape names what a policy targets, for grouping disagreements: each target kind, with
// "/section" when it names one, "@other" when it reaches only Gateways of another
// implementation's class and "@both" when those and Envoy Gateway's (classes.reach), and
// "selector" for target selectors; "+mergeType" when set.
func shape(p Object, objects []Object) string {
	spec, _ := p["spec"].(Object)
	meta, _ := p["metadata"].(Object)
	namespace, _ := meta["namespace"].(string)
	classes := classesOf(objects)
	set := map[string]bool{}
	refs, _ := spec["targetRefs"].([]any)
	for _, r := range refs {
		ref, _ := r.(Object)
		s, _ := ref["kind"].(string)
		if sec, ok := ref["sectionName"].(string); ok {
			if sec == "missing" {
				s += "/missing-section"
			} else {
				s += "/section"
			}
		}
		s += classes.reach(ref, namespace).String()
		set[s] = true
	}
	if sels, _ := spec["targetSelectors"].([]any); len(sels) > 0 {
		set["selector"] = true
	}
	parts := make([]string, 0, len(set))
	for s := range set {
		parts = append(parts, s)
	}
	sort.Strings(parts)
	out := strings.Join(parts, "+")
	if _, ok := spec["mergeType"]; ok {
		out += " mergeType"
	}
	return out
}

// gatewayClasses says which GatewayClass each Gateway of a scenario has, and which Gateways
// each ListenerSet and route hangs from, by "Kind namespace/name".
type gatewayClasses struct {
	class   map[string]string   // Gateway -> its class
	parents map[string][]string // ListenerSet or HTTPRoute -> its parents
}

func classesOf(objects []Object) gatewayClasses {
	c := gatewayClasses{class: map[string]string{}, parents: map[string][]string{}}
	for _, o := range objects {
		meta, _ := o["metadata"].(Object)
		spec, _ := o["spec"].(Object)
		self := fmt.Sprint(o["kind"], " ", meta["namespace"], "/", meta["name"])
		var refs []any
		switch o["kind"] {
		case "Gateway":
			c.class[self], _ = spec["gatewayClassName"].(string)
		case "ListenerSet":
			refs = []any{spec["parentRef"]}
		case "HTTPRoute":
			refs, _ = spec["parentRefs"].([]any)
		}
		for _, r := range refs {
			ref, _ := r.(Object)
			kind, ok := ref["kind"].(string)
			if !ok {
				kind = "Gateway"
			}
			c.parents[self] = append(c.parents[self], fmt.Sprint(kind, " ", ref["namespace"], "/", ref["name"]))
		}
	}
	return c
}

// Reach is which classes' Gateways a policy's target references hang from.
type Reach struct{ EG, Other bool }

// String is "@other" when the Gateways are of other classes only, "@both" when of those and
// Envoy Gateway's, else "".
func (r Reach) String() string {
	switch {
	case r.Other && r.EG:
		return "@both"
	case r.Other:
		return "@other"
	}
	return ""
}

// reach is where a target reference of a policy in namespace hangs from, by the parents the
// objects name, whether or not the listeners admit them: a label for grouping, not a
// judgement.
func (c gatewayClasses) reach(ref Object, namespace string) Reach {
	var r Reach
	var visit func(k string)
	visit = func(k string) {
		if class, ok := c.class[k]; ok {
			r.EG, r.Other = r.EG || class == ClassName, r.Other || class != ClassName
		}
		for _, parent := range c.parents[k] {
			visit(parent)
		}
	}
	visit(fmt.Sprint(ref["kind"], " ", namespace, "/", ref["name"]))
	return r
}

// reachOf is where all of a policy's target references hang from.
func reachOf(p Object, objects []Object) Reach {
	spec, _ := p["spec"].(Object)
	meta, _ := p["metadata"].(Object)
	namespace, _ := meta["namespace"].(string)
	classes := classesOf(objects)
	var r Reach
	refs, _ := spec["targetRefs"].([]any)
	for _, ref := range refs {
		ref, _ := ref.(Object)
		one := classes.reach(ref, namespace)
		r.EG, r.Other = r.EG || one.EG, r.Other || one.Other
	}
	return r
}
