package index

import (
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// objectTable holds the snapshot's target objects: pointers in one slice, found through a
// map of keyHash to slot that holds no pointers at all.
type objectTable struct {
	slab[*topology.Object]
	bySlot map[keyHash]int32
}

func newObjectTable() objectTable { return objectTable{bySlot: map[keyHash]int32{}} }

// get returns the object stored under key (without section).
func (t *objectTable) get(key policy.TargetKey) (*topology.Object, bool) {
	i, ok := t.bySlot[hashKey(key)]
	if !ok {
		return nil, false
	}
	if o := t.slots[i]; o.Key() == key {
		return o, true
	}
	return nil, false
}

// put stores o, replacing the object of the same key (in its slot), and returns o's slot.
func (t *objectTable) put(o *topology.Object) int32 {
	h := hashKey(o.Key())
	if i, ok := t.bySlot[h]; ok {
		t.slots[i] = o
		return i
	}
	i := t.add(o)
	t.bySlot[h] = i
	return i
}

// slotOf returns the slot of a stored object.
func (t *objectTable) slotOf(o *topology.Object) int32 { return t.bySlot[hashKey(o.Key())] }

// remove deletes the object stored under key, if any.
func (t *objectTable) remove(key policy.TargetKey) {
	h := hashKey(key)
	i, ok := t.bySlot[h]
	if !ok {
		return
	}
	delete(t.bySlot, h)
	t.release(i)
}
