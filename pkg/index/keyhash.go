package index

import (
	"hash/maphash"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/policy"
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

// labelAt is what the label index is keyed by: objects of one kind carrying one label (or,
// with an empty key, which no label has, every object of the kind).
type labelAt struct {
	kind       schema.GroupKind
	key, value string
}

func hashLabelAt(l labelAt) keyHash {
	return keyHash{maphash.Comparable(keySeeds[0], l), maphash.Comparable(keySeeds[1], l)}
}
