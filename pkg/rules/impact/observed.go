package impact

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/internal/intern"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Bounds of what is kept of one policy's status: Gateway API's CRDs allow 16 ancestors and
// 8 conditions on each, GEP-5058 16 targets; a message is kept to its first 256 bytes. A
// status read from manifests (not checked by a CRD) is cut to the same.
const (
	maxObservedAncestors  = 16
	maxObservedConditions = 8
	maxObservedTargets    = 16
	maxObservedMessage    = 256
)

// ObservedStatus is what the implementations wrote into one policy's status: one entry per
// ancestor and controller (status.ancestors), or one for the policy as a whole where its row
// says the implementation writes status.conditions (Kuadrant).
type ObservedStatus struct {
	Entries []ObservedEntry
}

// ObservedEntry is one set of conditions an implementation wrote.
type ObservedEntry struct {
	// Ancestor is the entry's ancestorRef, defaults applied (group gateway.networking.k8s.io,
	// kind Gateway, the policy's namespace); zero for a status of the policy as a whole.
	Ancestor   ObjectRef
	Controller string
	Conditions []kinds.Condition
	// Stale says a condition was written for an older generation of the policy than the one
	// read: the controller has not caught up, and the entry is not compared.
	Stale bool
	// Targets are GEP-5058's per-target entries; when present they, not Conditions, say
	// what the controller did ("If Targets is present, they MUST use it as the source of
	// truth").
	Targets []ObservedTarget
}

// ObservedTarget is one GEP-5058 PolicyTargetStatus.
type ObservedTarget struct {
	Target     ObjectRef
	Conditions []kinds.Condition
	Stale      bool
}

// ObservedOf reads the status of obj, the object p was decoded from, as p's row says the
// implementation writes it; nil when it holds nothing to compare.
func ObservedOf(p *policy.Policy, obj map[string]any) *ObservedStatus {
	status, _ := obj["status"].(map[string]any)
	if len(status) == 0 {
		return nil
	}
	row, namespace := p.Row, p.Namespace
	meta, _ := obj["metadata"].(map[string]any)
	generation, _ := number(meta["generation"])
	var out ObservedStatus
	if row.StatusScope() == kinds.StatusScopePolicy {
		conditions, stale := conditionsOf(status["conditions"], generation)
		if observed, ok := number(status["observedGeneration"]); ok && generation > 0 && observed < generation {
			stale = true // Kuadrant says for which generation it wrote them here
		}
		if len(conditions) > 0 {
			out.Entries = append(out.Entries, ObservedEntry{Controller: row.StatusConditions.Controller, Conditions: conditions, Stale: stale})
		}
	} else {
		ancestors, _ := status["ancestors"].([]any)
		for _, a := range ancestors {
			if len(out.Entries) == maxObservedAncestors {
				break
			}
			a, _ := a.(map[string]any)
			ref, _ := a["ancestorRef"].(map[string]any)
			if ref == nil {
				continue
			}
			e := ObservedEntry{Ancestor: refFrom(ref, kinds.GatewayGroup, "Gateway", namespace)}
			e.Controller, _ = a["controllerName"].(string)
			e.Controller = intern.String(e.Controller)
			e.Conditions, e.Stale = conditionsOf(a["conditions"], generation)
			targets, _ := a["targets"].([]any)
			for _, t := range targets {
				if len(e.Targets) == maxObservedTargets {
					break
				}
				t, _ := t.(map[string]any)
				tref, _ := t["targetRef"].(map[string]any)
				if tref == nil {
					continue
				}
				ot := ObservedTarget{Target: refFrom(tref, "", "", namespace)}
				ot.Target.Group = row.CoreGroup(ot.Target.Group)
				ot.Conditions, ot.Stale = conditionsOf(t["conditions"], generation)
				e.Targets = append(e.Targets, ot)
			}
			if len(e.Conditions) > 0 || len(e.Targets) > 0 {
				out.Entries = append(out.Entries, e)
			}
		}
	}
	if len(out.Entries) == 0 {
		return nil
	}
	return &out
}

// refFrom reads a reference with Gateway API's defaults for what it leaves out.
func refFrom(m map[string]any, group, kind, namespace string) ObjectRef {
	r := ObjectRef{Group: group, Kind: kind, Namespace: namespace}
	if g, ok := m["group"].(string); ok {
		r.Group = g
	}
	if k, ok := m["kind"].(string); ok && k != "" {
		r.Kind = k
	}
	if n, ok := m["namespace"].(string); ok && n != "" {
		r.Namespace = n
	}
	r.Name, _ = m["name"].(string)
	r.SectionName, _ = m["sectionName"].(string)
	if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: r.Group, Kind: r.Kind}); info.Scope == kinds.Cluster {
		r.Namespace = ""
	}
	r.Group, r.Kind, r.Namespace = intern.String(r.Group), intern.String(r.Kind), intern.String(r.Namespace)
	return r
}

// conditionsOf reads a list of metav1.Conditions, and whether one of them was written for
// a generation older than the policy's.
func conditionsOf(v any, generation int64) ([]kinds.Condition, bool) {
	list, _ := v.([]any)
	var out []kinds.Condition
	stale := false
	for _, c := range list {
		if len(out) == maxObservedConditions {
			break
		}
		c, _ := c.(map[string]any)
		var k kinds.Condition
		k.Type, _ = c["type"].(string)
		if k.Type == "" {
			continue
		}
		k.Status, _ = c["status"].(string)
		k.Reason, _ = c["reason"].(string)
		k.Message, _ = c["message"].(string)
		if observed, ok := number(c["observedGeneration"]); ok && generation > 0 && observed < generation {
			stale = true
		}
		k.Type, k.Status, k.Reason = intern.String(k.Type), intern.String(k.Status), intern.String(k.Reason)
		k.Message = cut(k.Message, maxObservedMessage)
		out = append(out, k)
	}
	return out, stale
}

// cut shortens s to at most n bytes, at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// Observations are the statuses read for many policies, by kind, namespace and name. The
// zero value is empty and ready; a nil *Observations holds nothing.
type Observations struct {
	m map[observedID]*ObservedStatus
}

type observedID struct {
	kind            schema.GroupKind
	namespace, name string
}

// Add records the status of obj, the object p was decoded from (forgetting an earlier one
// when it holds nothing to compare).
func (o *Observations) Add(p *policy.Policy, obj map[string]any) {
	id := observedID{p.GroupKind(), p.Namespace, p.Name}
	seen := ObservedOf(p, obj)
	if seen == nil {
		delete(o.m, id)
		return
	}
	if o.m == nil {
		o.m = map[observedID]*ObservedStatus{}
	}
	o.m[id] = seen
}

// Remove forgets a policy's status.
func (o *Observations) Remove(kind schema.GroupKind, namespace, name string) {
	if o != nil {
		delete(o.m, observedID{kind, namespace, name})
	}
}

// Of returns the status recorded for p, or nil.
func (o *Observations) Of(p *policy.Policy) *ObservedStatus {
	if o == nil {
		return nil
	}
	return o.m[observedID{p.GroupKind(), p.Namespace, p.Name}]
}

// Len is how many policies have a status recorded.
func (o *Observations) Len() int {
	if o == nil {
		return 0
	}
	return len(o.m)
}
