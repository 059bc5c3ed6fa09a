package index

import (
	"hash/maphash"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// keyHash stands for a TargetKey (with, for policy indexes, a policy kind) in the snapshot's
// indexes. A map keyed by TargetKey holds five string headers per entry, and the garbage
// collector scans every slot of such a map and visits every string it points to on every
// cycle: the object index alone was a sixth of a full collection with the synthetic
// snapshot. A map keyed by two machine words is scanned only for its values, or not at all
// when they hold no pointers either.
//
// Two 64-bit hashes with independent random seeds (about 45 ns together) make 128 bits: the
// chance that two of a million distinct keys share a keyHash is below 10^-26, far below the
// chance of a memory error, and the seeds are the process's own, so no input can be crafted
// to collide. Lookups that return objects still compare the object's own key: were two keys
// ever to collide, the later would replace the earlier, which would then read as absent,
// never as the other object.
type keyHash struct{ lo, hi uint64 }

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hashKey(k policy.TargetKey) keyHash {
	return keyHash{maphash.Comparable(keySeeds[0], k), maphash.Comparable(keySeeds[1], k)}
}

// policyAt is what the policy index is keyed by: a policy kind at one attachment point.
type policyAt struct {
	kind schema.GroupKind
	key  policy.TargetKey
}

func hashPolicyAt(p policyAt) keyHash {
	return keyHash{maphash.Comparable(keySeeds[0], p), maphash.Comparable(keySeeds[1], p)}
}

// objectTable holds the snapshot's target objects: pointers in one slice, found through a
// map of keyHash to slot that holds no pointers at all.
type objectTable struct {
	slots  []*topology.Object
	bySlot map[keyHash]int32
	free   []int32
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
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
		t.slots[i] = o
	} else {
		i = int32(len(t.slots))
		t.slots = append(t.slots, o)
	}
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
	t.slots[i] = nil // the slot no longer keeps the object alive
	t.free = append(t.free, i)
}
