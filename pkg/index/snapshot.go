package index

import (
	"fmt"
	"iter"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Snapshot is the in-memory, indexed topology.Snapshot the webhook, `check` and the tests
// judge against. It is not safe for concurrent writes; the webhook's store guards it.
type Snapshot struct {
	objects objectTable
	// Topology indexes, kept in step with objects by AddObject. Those keyed by a target key
	// use its keyHash (keyhash.go): the collector then scans no key of them. The two route
	// indexes, which hold every route once or more, list objects' slots (slot_index.go).
	routesByParent  slotIndex
	routesByBackend slotIndex
	gatewaysByClass map[string][]*topology.Object
	gatewaysByNS    map[string][]*topology.Object
	setsByGateway   map[keyHash][]*topology.Object
	// byLabel lists the objects of a kind by each label they carry, and all of them under
	// the kind alone (labels.go): target selectors are resolved through it.
	byLabel slotIndex

	policies policyIndex
	grants   map[string][]*gatewayv1.ReferenceGrant
}

// New returns an empty snapshot.
func New() *Snapshot {
	return &Snapshot{
		objects: newObjectTable(),

		routesByParent:  newSlotIndex(),
		routesByBackend: newSlotIndex(),
		gatewaysByClass: map[string][]*topology.Object{},
		gatewaysByNS:    map[string][]*topology.Object{},
		setsByGateway:   map[keyHash][]*topology.Object{},
		byLabel:         newSlotIndex(),
		policies:        newPolicyIndex(),
		grants:          map[string][]*gatewayv1.ReferenceGrant{},
	}
}

// AddObject stores (or replaces) a target object and indexes its topology.
func (s *Snapshot) AddObject(o *topology.Object) {
	if old, ok := s.objects.get(o.Key()); ok {
		s.indexObject(old, s.objects.slotOf(old), false)
	}
	s.indexObject(o, s.objects.put(o), true)
}

func appendObject(list []*topology.Object, o *topology.Object) []*topology.Object {
	return append(list, o)
}

func removeObject(list []*topology.Object, o *topology.Object) []*topology.Object {
	for i, x := range list {
		if x == o {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// indexObject adds an object, stored in slot, to every index it belongs in, or removes it.
func (s *Snapshot) indexObject(o *topology.Object, slot int32, add bool) {
	op, update := appendObject, (*slotIndex).add
	if !add {
		op, update = removeObject, (*slotIndex).remove
	}
	s.indexLabels(o, slot, add)
	switch {
	case o.Route != nil:
		seen := map[policy.TargetKey]bool{}
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
func (s *Snapshot) Gateways() []*topology.Object {
	var out []*topology.Object
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
func (s *Snapshot) RoutesByParent(parent policy.TargetKey) iter.Seq[*topology.Object] {
	return s.objectsIn(&s.routesByParent, hashKey(parent))
}

// RoutesByBackend implements Snapshot.
func (s *Snapshot) RoutesByBackend(backend policy.TargetKey) iter.Seq[*topology.Object] {
	return s.objectsIn(&s.routesByBackend, hashKey(backend))
}

// objectsIn yields the objects of the slots x lists under h.
func (s *Snapshot) objectsIn(x *slotIndex, h keyHash) iter.Seq[*topology.Object] {
	return func(yield func(*topology.Object) bool) {
		for slot := range x.each(h) {
			if !yield(s.objects.slots[slot]) {
				return
			}
		}
	}
}

// GatewaysByClass implements Snapshot.
func (s *Snapshot) GatewaysByClass(class string) []*topology.Object { return s.gatewaysByClass[class] }

// GatewaysInNamespace implements Snapshot.
func (s *Snapshot) GatewaysInNamespace(ns string) []*topology.Object { return s.gatewaysByNS[ns] }

// ListenerSetsByGateway implements Snapshot.
func (s *Snapshot) ListenerSetsByGateway(gw policy.TargetKey) []*topology.Object {
	return s.setsByGateway[hashKey(gw)]
}

// AddResource stores a non-policy object the rules read: a ReferenceGrant (v1 or v1beta1,
// same schema) or a target kind. Other kinds are ignored; it reports whether it kept obj.
func (s *Snapshot) AddResource(gk schema.GroupKind, obj map[string]any) (bool, error) {
	if gk == kinds.ReferenceGrant {
		var g gatewayv1.ReferenceGrant
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &g); err != nil {
			return false, fmt.Errorf("ReferenceGrant: %w", err)
		}
		s.AddReferenceGrant(&g)
		return true, nil
	}
	if kinds.IsTargetKind(gk) {
		s.AddObject(topology.NewObject(gk.Group, gk.Kind, obj))
		return true, nil
	}
	return false, nil
}

// AddReferenceGrant stores (or replaces, by namespace and name) a ReferenceGrant.
func (s *Snapshot) AddReferenceGrant(g *gatewayv1.ReferenceGrant) {
	s.RemoveReferenceGrant(g.Namespace, g.Name)
	s.grants[g.Namespace] = append(s.grants[g.Namespace], g)
}

// RemoveReferenceGrant deletes a ReferenceGrant.
func (s *Snapshot) RemoveReferenceGrant(namespace, name string) {
	list := s.grants[namespace]
	for i, g := range list {
		if g.Name == name {
			s.grants[namespace] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// RemoveObject deletes a target object and its index entries.
func (s *Snapshot) RemoveObject(key policy.TargetKey) {
	if old, ok := s.objects.get(key.Object()); ok {
		s.indexObject(old, s.objects.slotOf(old), false)
		s.objects.remove(key.Object())
	}
}

// Object implements Snapshot.
func (s *Snapshot) Object(key policy.TargetKey) (*topology.Object, bool) {
	return s.objects.get(key.Object())
}

// ReferenceGrants implements Snapshot.
func (s *Snapshot) ReferenceGrants(namespace string) []*gatewayv1.ReferenceGrant {
	return s.grants[namespace]
}
