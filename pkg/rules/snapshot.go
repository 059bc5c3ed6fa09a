package rules

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Snapshot is the state of the cluster the rules read. Every lookup is by key or index;
// a rule never lists the world. The webhook backs it with a store fed by list and watch; `check` and
// tests back it with a MemorySnapshot.
type Snapshot interface {
	// Object returns a non-policy object (Gateway, HTTPRoute, Service...) by key (no section).
	Object(key TargetKey) (*Object, bool)
	// PoliciesAt returns the policies of one kind attached at exactly key (object and section).
	PoliciesAt(kind schema.GroupKind, key TargetKey) []*Policy
	// ReferenceGrants returns the ReferenceGrants in a namespace (v1 and v1beta1 alike).
	ReferenceGrants(namespace string) []*gatewayv1.ReferenceGrant

	// RoutesByParent returns the xRoutes with a parentRef naming a Gateway or ListenerSet.
	RoutesByParent(parent TargetKey) iter.Seq[*Object]
	// RoutesByBackend returns the xRoutes with a backendRef naming a backend.
	RoutesByBackend(backend TargetKey) iter.Seq[*Object]
	// GatewaysByClass returns the Gateways of a GatewayClass.
	GatewaysByClass(class string) []*Object
	// GatewaysInNamespace returns the Gateways in a namespace.
	GatewaysInNamespace(namespace string) []*Object
	// ListenerSetsByGateway returns the ListenerSets whose parentRef names a Gateway.
	ListenerSetsByGateway(gateway TargetKey) []*Object
	// PoliciesIn returns the policies of one kind in a namespace.
	PoliciesIn(kind schema.GroupKind, namespace string) []*Policy
}

// Object is a target object as the rules see it.
type Object struct {
	Group, Kind, Namespace, Name string
	// Labels are kept for Namespaces only: no rule reads the labels of other objects.
	Labels map[string]string
	// sections are the names of its listeners, rules or ports, each ended by a NUL (no name
	// holds one), interned: most routes, Gateways and Services repeat the same few lists,
	// which then cost no memory and no collector's work per object; a slice of names was one
	// more object per object for the collector to visit. hasSections says whether the kind
	// has sections at all.
	sections    string
	hasSections bool
	// Topology, parsed once: set for Gateways and ListenerSets, xRoutes, and backends.
	Gateway *GatewayInfo
	Route   *RouteInfo
	Service *ServiceInfo
}

// HasSection reports whether the object has a listener, rule or port of that name.
func (o *Object) HasSection(name string) bool {
	for rest := o.sections; rest != ""; {
		var s string
		s, rest, _ = strings.Cut(rest, "\x00")
		if s == name {
			return true
		}
	}
	return false
}

// HasSections reports whether the object's kind has sections (listeners, rules or ports).
func (o *Object) HasSections() bool { return o.hasSections }

// GroupKind of the object.
func (o *Object) GroupKind() schema.GroupKind { return schema.GroupKind{Group: o.Group, Kind: o.Kind} }

// Key returns the object's key.
func (o *Object) Key() TargetKey {
	return TargetKey{Group: o.Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// NewObject decodes a generic JSON object into an Object, collecting its section names and
// its topology. It keeps nothing of raw: a snapshot of thousands of routes must not hold
// their JSON twice.
func NewObject(group, kind string, raw map[string]any) *Object {
	meta, _ := raw["metadata"].(map[string]any)
	o := allocObject(schema.GroupKind{Group: group, Kind: kind})
	o.Group, o.Kind = intern(group), intern(kind)
	o.Namespace = intern(str(meta["namespace"]))
	o.Name, _ = meta["name"].(string)
	if labels, ok := meta["labels"].(map[string]any); ok && kind == "Namespace" && group == CoreGroup {
		o.Labels = make(map[string]string, len(labels))
		for k, v := range labels {
			o.Labels[k], _ = v.(string)
		}
	}
	info, _ := TargetInfoFor(schema.GroupKind{Group: group, Kind: kind})
	if info.SectionList != "" {
		o.hasSections = true
		spec, _ := raw["spec"].(map[string]any)
		items, _ := spec[info.SectionList].([]any)
		var names strings.Builder
		for _, item := range items {
			m, _ := item.(map[string]any)
			if name, ok := m["name"].(string); ok && name != "" && !strings.Contains(name, "\x00") && !o.HasSection(name) {
				names.WriteString(name)
				names.WriteByte(0)
				o.sections = names.String()
			}
		}
		o.sections = intern(o.sections)
	}
	o.parseTopology(raw)
	return o
}

// MemorySnapshot is an in-memory, indexed Snapshot. It is not safe for concurrent writes.
type MemorySnapshot struct {
	objects objectTable
	// Topology indexes, kept in step with objects by AddObject. Those keyed by a target key
	// use its keyHash (keyhash.go): the collector then scans no key of them. The two route
	// indexes, which hold every route once or more, list objects' slots (slot_index.go).
	routesByParent  slotIndex
	routesByBackend slotIndex
	gatewaysByClass map[string][]*Object
	gatewaysByNS    map[string][]*Object
	setsByGateway   map[keyHash][]*Object

	policies map[policyID]*Policy
	byTarget map[keyHash][]*Policy // by policyAt: a kind at one attachment point
	byNS     map[schema.GroupKind]map[string][]*Policy
	grants   map[string][]*gatewayv1.ReferenceGrant
}

type policyID struct {
	kind            schema.GroupKind
	namespace, name string
}

// NewMemorySnapshot returns an empty snapshot.
func NewMemorySnapshot() *MemorySnapshot {
	return &MemorySnapshot{
		objects: newObjectTable(),

		routesByParent:  newSlotIndex(),
		routesByBackend: newSlotIndex(),
		gatewaysByClass: map[string][]*Object{},
		gatewaysByNS:    map[string][]*Object{},
		setsByGateway:   map[keyHash][]*Object{},
		policies:        map[policyID]*Policy{},
		byTarget:        map[keyHash][]*Policy{},
		byNS:            map[schema.GroupKind]map[string][]*Policy{},
		grants:          map[string][]*gatewayv1.ReferenceGrant{},
	}
}

// AddObject stores (or replaces) a target object and indexes its topology.
func (s *MemorySnapshot) AddObject(o *Object) {
	if old, ok := s.objects.get(o.Key()); ok {
		s.indexObject(old, s.objects.slotOf(old), false)
	}
	s.indexObject(o, s.objects.put(o), true)
}

func appendObject(list []*Object, o *Object) []*Object { return append(list, o) }

func removeObject(list []*Object, o *Object) []*Object {
	for i, x := range list {
		if x == o {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// indexObject adds an object, stored in slot, to every index it belongs in, or removes it.
func (s *MemorySnapshot) indexObject(o *Object, slot int32, add bool) {
	op, update := appendObject, (*slotIndex).add
	if !add {
		op, update = removeObject, (*slotIndex).remove
	}
	switch {
	case o.Route != nil:
		seen := map[TargetKey]bool{}
		for p := range o.Route.ParentRefs() {
			if key := p.Key(); !seen[key] {
				seen[key] = true
				update(&s.routesByParent, hashKey(key), slot)
			}
		}
		for b := range o.Route.AllBackends() {
			if key := b.Key(); !seen[key] {
				seen[key] = true
				update(&s.routesByBackend, hashKey(key), slot)
			}
		}
	case o.Gateway != nil && o.Gateway.Parent != nil:
		h := hashKey(*o.Gateway.Parent)
		s.setsByGateway[h] = op(s.setsByGateway[h], o)
	case o.Gateway != nil:
		s.gatewaysByClass[o.Gateway.ClassName] = op(s.gatewaysByClass[o.Gateway.ClassName], o)
		s.gatewaysByNS[o.Namespace] = op(s.gatewaysByNS[o.Namespace], o)
	}
}

// Gateways returns every Gateway, ordered by namespace and name (for whole-state views).
func (s *MemorySnapshot) Gateways() []*Object {
	var out []*Object
	for _, list := range s.gatewaysByNS {
		out = append(out, list...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// RoutesByParent implements Snapshot.
func (s *MemorySnapshot) RoutesByParent(parent TargetKey) iter.Seq[*Object] {
	return s.objectsIn(&s.routesByParent, hashKey(parent))
}

// RoutesByBackend implements Snapshot.
func (s *MemorySnapshot) RoutesByBackend(backend TargetKey) iter.Seq[*Object] {
	return s.objectsIn(&s.routesByBackend, hashKey(backend))
}

// objectsIn yields the objects of the slots x lists under h.
func (s *MemorySnapshot) objectsIn(x *slotIndex, h keyHash) iter.Seq[*Object] {
	return func(yield func(*Object) bool) {
		for slot := range x.each(h) {
			if !yield(s.objects.slots[slot]) {
				return
			}
		}
	}
}

// GatewaysByClass implements Snapshot.
func (s *MemorySnapshot) GatewaysByClass(class string) []*Object { return s.gatewaysByClass[class] }

// GatewaysInNamespace implements Snapshot.
func (s *MemorySnapshot) GatewaysInNamespace(ns string) []*Object { return s.gatewaysByNS[ns] }

// ListenerSetsByGateway implements Snapshot.
func (s *MemorySnapshot) ListenerSetsByGateway(gw TargetKey) []*Object {
	return s.setsByGateway[hashKey(gw)]
}

// AddResource stores a non-policy object the rules read: a ReferenceGrant (v1 or v1beta1,
// same schema) or a target kind. Other kinds are ignored; it reports whether it kept obj.
func (s *MemorySnapshot) AddResource(gk schema.GroupKind, obj map[string]any) (bool, error) {
	if gk == referenceGrantKind {
		var g gatewayv1.ReferenceGrant
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &g); err != nil {
			return false, fmt.Errorf("ReferenceGrant: %w", err)
		}
		s.AddReferenceGrant(&g)
		return true, nil
	}
	if IsTargetKind(gk) {
		s.AddObject(NewObject(gk.Group, gk.Kind, obj))
		return true, nil
	}
	return false, nil
}

var referenceGrantKind = schema.GroupKind{Group: GatewayGroup, Kind: "ReferenceGrant"}

// IsNamespacedResource reports whether objects of a non-policy kind live in namespaces.
func IsNamespacedResource(gk schema.GroupKind) bool {
	if gk == referenceGrantKind {
		return true
	}
	info, _ := TargetInfoFor(gk)
	return info.Scope == Namespaced
}

// AddReferenceGrant stores (or replaces, by namespace and name) a ReferenceGrant.
func (s *MemorySnapshot) AddReferenceGrant(g *gatewayv1.ReferenceGrant) {
	s.RemoveReferenceGrant(g.Namespace, g.Name)
	s.grants[g.Namespace] = append(s.grants[g.Namespace], g)
}

// RemoveReferenceGrant deletes a ReferenceGrant.
func (s *MemorySnapshot) RemoveReferenceGrant(namespace, name string) {
	list := s.grants[namespace]
	for i, g := range list {
		if g.Name == name {
			s.grants[namespace] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// RemoveObject deletes a target object and its index entries.
func (s *MemorySnapshot) RemoveObject(key TargetKey) {
	if old, ok := s.objects.get(key.Object()); ok {
		s.indexObject(old, s.objects.slotOf(old), false)
		s.objects.remove(key.Object())
	}
}

// PutPolicy stores a policy, replacing an earlier version of the same kind/namespace/name.
// The policy's spec is frozen to compact JSON (Policy.freeze); Spec() reads it the same.
func (s *MemorySnapshot) PutPolicy(p *Policy) {
	p.freeze()
	s.putPolicy(p)
}

// PutPolicyUnfrozen stores a policy as PutPolicy does but keeps its spec as generic JSON:
// for a policy held a moment (a reservation, which the policy's own watch event replaces),
// where encoding it would cost its review more than the collector saves.
func (s *MemorySnapshot) PutPolicyUnfrozen(p *Policy) { s.putPolicy(p) }

func (s *MemorySnapshot) putPolicy(p *Policy) {
	s.RemovePolicy(p.GroupKind(), p.Namespace, p.Name)
	id := policyID{p.GroupKind(), p.Namespace, p.Name}
	s.policies[id] = p
	for _, key := range uniqueKeys(p) {
		h := hashPolicyAt(policyAt{id.kind, key})
		if list := s.byTarget[h]; len(list) > 0 {
			s.byTarget[h] = append(list, p)
		} else {
			// Alone at this attachment point, as most policies are: the list is p's own
			// room, not one more object per policy for the collector (see Policy.alone).
			p.alone[0] = p
			s.byTarget[h] = p.alone[:]
		}
	}
	if s.byNS[id.kind] == nil {
		s.byNS[id.kind] = map[string][]*Policy{}
	}
	s.byNS[id.kind][p.Namespace] = append(s.byNS[id.kind][p.Namespace], p)
}

// RemovePolicy deletes a policy and its index entries.
func (s *MemorySnapshot) RemovePolicy(kind schema.GroupKind, namespace, name string) {
	id := policyID{kind, namespace, name}
	old, ok := s.policies[id]
	if !ok {
		return
	}
	delete(s.policies, id)
	inNS := s.byNS[kind][namespace]
	for i, q := range inNS {
		if q == old {
			s.byNS[kind][namespace] = append(inNS[:i:i], inNS[i+1:]...)
			break
		}
	}
	for _, key := range uniqueKeys(old) {
		h := hashPolicyAt(policyAt{kind, key})
		list := s.byTarget[h]
		for i, q := range list {
			if q == old {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.byTarget, h)
		} else {
			s.byTarget[h] = list
		}
	}
}

// GetPolicy returns a stored policy.
func (s *MemorySnapshot) GetPolicy(kind schema.GroupKind, namespace, name string) (*Policy, bool) {
	p, ok := s.policies[policyID{kind, namespace, name}]
	return p, ok
}

// Policies returns every stored policy, ordered by kind, namespace and name.
func (s *MemorySnapshot) Policies() []*Policy {
	out := make([]*Policy, 0, len(s.policies))
	for _, p := range s.policies {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := strings.Compare(qualifiedKind(a.Row.Group, a.Row.Kind), qualifiedKind(b.Row.Group, b.Row.Kind)); c != 0 {
			return c < 0
		}
		return a.Ref() < b.Ref()
	})
	return out
}

// Object implements Snapshot.
func (s *MemorySnapshot) Object(key TargetKey) (*Object, bool) {
	return s.objects.get(key.Object())
}

// PoliciesAt implements Snapshot.
func (s *MemorySnapshot) PoliciesAt(kind schema.GroupKind, key TargetKey) []*Policy {
	return s.byTarget[hashPolicyAt(policyAt{kind, key})]
}

// PoliciesIn implements Snapshot.
func (s *MemorySnapshot) PoliciesIn(kind schema.GroupKind, namespace string) []*Policy {
	return s.byNS[kind][namespace]
}

// ReferenceGrants implements Snapshot.
func (s *MemorySnapshot) ReferenceGrants(namespace string) []*gatewayv1.ReferenceGrant {
	return s.grants[namespace]
}

// uniqueKeys returns the distinct attachment points of a policy. A policy names a handful,
// compared pairwise; a set is built only for a long list (a review can hold thousands of
// references, and pairwise that would be quadratic).
func uniqueKeys(p *Policy) []TargetKey {
	out := make([]TargetKey, 0, len(p.TargetRefs))
	var seen map[TargetKey]struct{}
	if len(p.TargetRefs) > pairwiseUpTo {
		seen = make(map[TargetKey]struct{}, len(p.TargetRefs))
	}
	for _, ref := range p.TargetRefs {
		k := p.Key(ref)
		if seen != nil {
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
		} else if slices.Contains(out, k) {
			continue
		}
		out = append(out, k)
	}
	return out
}
