package index

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// policyIndex holds the stored policies and finds them by identity, by attachment point and
// by namespace.
//
// Most attachment points hold one policy of a kind. A list per attachment point would be
// one more allocation per policy for the collector to visit on every cycle, so a lone
// policy is named by its slot in slots, and PoliciesAt hands out a one-element slice of
// slots itself; only attachment points with two or more policies have a list of their own
// (crowded). Slices handed out are valid until the next write, like every answer of the
// snapshot (the webhook's store reads them under its read lock).
type policyIndex struct {
	slab[*policy.Policy]
	byID map[policyID]int32
	// byTarget maps a policy kind at one attachment point (hashPolicyAt) to the slot of
	// the one policy there (>= 0) or to its list in crowded (-1-i).
	byTarget    map[keyHash]int32
	crowded     slab[[]*policy.Policy]
	byNamespace map[schema.GroupKind]map[string][]*policy.Policy
	// selecting lists, by kind, the policies with target selectors: what they select is
	// resolved when asked (PoliciesAt), so a label written later moves them at once.
	selecting map[schema.GroupKind][]*policy.Policy
}

type policyID struct {
	kind            schema.GroupKind
	namespace, name string
}

func idOf(p *policy.Policy) policyID { return policyID{p.GroupKind(), p.Namespace, p.Name} }

func newPolicyIndex() policyIndex {
	return policyIndex{
		byID:        map[policyID]int32{},
		byTarget:    map[keyHash]int32{},
		byNamespace: map[schema.GroupKind]map[string][]*policy.Policy{},
		selecting:   map[schema.GroupKind][]*policy.Policy{},
	}
}

// PutPolicy stores a policy, replacing an earlier version of the same kind, namespace and
// name, and returns the policy as stored: a compact copy (policy.Compact) that reads the
// same. Callers that go on to ask about the stored policy (its impact) use what it returns.
func (s *Snapshot) PutPolicy(p *policy.Policy) *policy.Policy {
	c := p.Compact()
	s.policies.put(c)
	return c
}

// PutPolicyAsIs stores a policy as PutPolicy does, without compacting it: for a policy held
// a moment (the webhook's reservation of an admitted write, which the policy's own watch
// event replaces), where encoding it would cost its review more than the collector saves.
func (s *Snapshot) PutPolicyAsIs(p *policy.Policy) { s.policies.put(p) }

// RemovePolicy deletes a policy and its index entries.
func (s *Snapshot) RemovePolicy(kind schema.GroupKind, namespace, name string) {
	s.policies.remove(policyID{kind, namespace, name})
}

// GetPolicy returns a stored policy.
func (s *Snapshot) GetPolicy(kind schema.GroupKind, namespace, name string) (*policy.Policy, bool) {
	slot, ok := s.policies.byID[policyID{kind, namespace, name}]
	if !ok {
		return nil, false
	}
	return s.policies.slots[slot], true
}

// Policies returns every stored policy, ordered by kind, namespace and name.
func (s *Snapshot) Policies() []*policy.Policy {
	out := make([]*policy.Policy, 0, len(s.policies.byID))
	for _, slot := range s.policies.byID {
		out = append(out, s.policies.slots[slot])
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := strings.Compare(kinds.QualifiedKind(a.Row.Group, a.Row.Kind), kinds.QualifiedKind(b.Row.Group, b.Row.Kind)); c != 0 {
			return c < 0
		}
		return a.Ref() < b.Ref()
	})
	return out
}

// PoliciesAt implements topology.Snapshot: the policies whose references name key, then
// those whose selectors select it now.
func (s *Snapshot) PoliciesAt(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy {
	named := s.policiesNaming(kind, key)
	if len(s.policies.selecting[kind]) == 0 {
		return named
	}
	return topology.AppendSelecting(s, kind, key, named)
}

// policiesNaming returns the policies of kind whose references name key.
func (s *Snapshot) policiesNaming(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy {
	x := &s.policies
	v, ok := x.byTarget[hashPolicyAt(policyAt{kind, key})]
	switch {
	case !ok:
		return nil
	case v >= 0:
		return x.slots[v : v+1 : v+1]
	default:
		return x.crowded.slots[-1-v]
	}
}

// PoliciesIn implements topology.Snapshot.
func (s *Snapshot) PoliciesIn(kind schema.GroupKind, namespace string) []*policy.Policy {
	return s.policies.byNamespace[kind][namespace]
}

func (x *policyIndex) put(p *policy.Policy) {
	id := idOf(p)
	x.remove(id)
	slot := x.add(p)
	x.byID[id] = slot
	for _, key := range p.UniqueKeys() {
		h := hashPolicyAt(policyAt{id.kind, key})
		v, ok := x.byTarget[h]
		switch {
		case !ok:
			x.byTarget[h] = slot
		case v >= 0:
			x.byTarget[h] = -1 - x.crowded.add([]*policy.Policy{x.slots[v], p})
		default:
			x.crowded.slots[-1-v] = append(x.crowded.slots[-1-v], p)
		}
	}
	if x.byNamespace[id.kind] == nil {
		x.byNamespace[id.kind] = map[string][]*policy.Policy{}
	}
	x.byNamespace[id.kind][p.Namespace] = append(x.byNamespace[id.kind][p.Namespace], p)
	if len(p.TargetSelectors()) > 0 {
		x.selecting[id.kind] = append(x.selecting[id.kind], p)
	}
}

func (x *policyIndex) remove(id policyID) {
	slot, ok := x.byID[id]
	if !ok {
		return
	}
	old := x.slots[slot]
	delete(x.byID, id)
	x.release(slot)
	x.byNamespace[id.kind][id.namespace] = without(x.byNamespace[id.kind][id.namespace], old)
	if len(old.TargetSelectors()) > 0 {
		x.selecting[id.kind] = without(x.selecting[id.kind], old)
	}
	for _, key := range old.UniqueKeys() {
		h := hashPolicyAt(policyAt{id.kind, key})
		v, ok := x.byTarget[h]
		switch {
		case !ok:
		case v >= 0:
			delete(x.byTarget, h)
		default:
			// Copied, not changed in place: a list handed out before stays as it was.
			list := without(x.crowded.slots[-1-v], old)
			if len(list) > 1 {
				x.crowded.slots[-1-v] = list
				continue
			}
			x.crowded.release(-1 - v)
			if len(list) == 1 {
				x.byTarget[h] = x.byID[idOf(list[0])]
			} else {
				delete(x.byTarget, h)
			}
		}
	}
}

// without returns list without p, copying only when p is in it.
func without(list []*policy.Policy, p *policy.Policy) []*policy.Policy {
	if i := slices.Index(list, p); i >= 0 {
		return append(list[:i:i], list[i+1:]...)
	}
	return list
}
