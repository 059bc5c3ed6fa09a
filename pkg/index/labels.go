package index

import (
	"iter"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// indexLabels adds a stored object to the label index (each of its labels, and its kind),
// or removes it.
func (s *Snapshot) indexLabels(o *topology.Object, slot int32, add bool) {
	update := (*slotIndex).add
	if !add {
		update = (*slotIndex).remove
	}
	gk := o.GroupKind()
	update(&s.byLabel, hashLabelAt(labelAt{kind: gk}), slot)
	for k, v := range o.Labels().All() {
		update(&s.byLabel, hashLabelAt(labelAt{gk, k, v}), slot)
	}
}

// ObjectsLabelled implements topology.Snapshot.
func (s *Snapshot) ObjectsLabelled(gk schema.GroupKind, key, value string) iter.Seq[*topology.Object] {
	return s.labelled(gk, key, value)
}

// ObjectsOfKind implements topology.Snapshot.
func (s *Snapshot) ObjectsOfKind(gk schema.GroupKind) iter.Seq[*topology.Object] {
	return s.labelled(gk, "", "")
}

// labelled yields the objects listed under one label, checking each one's own labels: a
// keyHash stands for its label with no real chance of collision, and a check is cheap.
func (s *Snapshot) labelled(gk schema.GroupKind, key, value string) iter.Seq[*topology.Object] {
	return func(yield func(*topology.Object) bool) {
		for o := range s.objectsIn(&s.byLabel, hashLabelAt(labelAt{gk, key, value})) {
			if o.GroupKind() != gk {
				continue
			}
			if got, ok := o.Labels().Lookup(key); key != "" && (!ok || got != value) {
				continue
			}
			if !yield(o) {
				return
			}
		}
	}
}

// SelectingPolicies implements topology.Snapshot.
func (s *Snapshot) SelectingPolicies(kind schema.GroupKind) []*policy.Policy {
	return s.policies.selecting[kind]
}
