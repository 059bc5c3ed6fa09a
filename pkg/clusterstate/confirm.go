package clusterstate

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultConfirmWindow is how long an admitted policy may go without its watch event before
// the API server is asked whether it stored it. The API server stores a write within
// milliseconds of the last webhook's answer; a review that never came through it (forged
// straight to a pod, when the port does not authenticate its callers) is never stored, and
// its reservation and claims must not outlive this window: they would refuse or delay
// others' writes at its targets.
const DefaultConfirmWindow = time.Second

// Lookup reads one policy as the API server stores it; found is false when it stores none.
type Lookup func(ctx context.Context, gk schema.GroupKind, namespace, name string) (obj map[string]any, found bool, err error)

// maxConfirmsPerRound bounds the reads of one ConfirmReservations: a flood of unconfirmed
// reservations is worked off over several rounds, never as a burst of reads. The reads are
// one after another, a millisecond or a few each; at a round every quarter window, 128 a
// round keep up with 512 forged reviews a second (ten callers at --caller-claim-rate's
// default), so their claims are given back within GivenBackWithin.
const maxConfirmsPerRound = 128

// GivenBackWithin is how long after its review a reservation the API server never stored,
// and its claims, may last while the API server answers: the confirm window, a quarter of it
// (the pace of the rounds), and a second for the read and the claims' release. It holds while
// at most maxConfirmsPerRound reservations fall due in a round; past that, each further
// round's worth waits a round more.
func GivenBackWithin(window time.Duration) time.Duration { return window + window/4 + time.Second }

// confirmTimeout bounds one read.
const confirmTimeout = time.Second

// ConfirmReservations asks the API server about each reservation older than window that no
// watch event has confirmed. One it does not store is dropped, and the claims it was judged
// under are given back as not admitted (package claims deletes a Lease nothing was ever
// admitted under). One it stores takes the stored object's place (the watch is only late),
// and its claims are released as admitted. One it could not read is asked again in the next
// round, and expires after ReservationTTL as before. It returns how many it dropped.
func (s *Store) ConfirmReservations(ctx context.Context, window time.Duration, lookup Lookup) int {
	type due struct {
		id policyID
		at time.Time
	}
	var ask []due
	s.mu.RLock()
	for id, at := range s.reserved {
		if s.now().Sub(at) > window {
			ask = append(ask, due{id, at})
			if len(ask) == maxConfirmsPerRound {
				break
			}
		}
	}
	s.mu.RUnlock()
	dropped := 0
	for _, d := range ask {
		rctx, cancel := context.WithTimeout(ctx, confirmTimeout)
		obj, found, err := lookup(rctx, d.id.kind, d.id.namespace, d.id.name)
		cancel()
		if err != nil {
			confirmErrors.Inc()
			continue
		}
		s.mu.Lock()
		if at, ok := s.reserved[d.id]; ok && at.Equal(d.at) {
			if found {
				s.upsert(d.id.kind, obj) // confirms it, as its watch event will
			} else {
				s.generation++
				s.snap.RemovePolicy(d.id.kind, d.id.namespace, d.id.name)
				delete(s.reserved, d.id)
				s.releaseHeld(d.id, false)
				reservationsUnconfirmed.Inc()
				dropped++
			}
		}
		s.mu.Unlock()
	}
	return dropped
}

// LookupFrom reads policies through r, finding each kind's version with mapper.
func LookupFrom(r client.Reader, mapper meta.RESTMapper) Lookup {
	return func(ctx context.Context, gk schema.GroupKind, namespace, name string) (map[string]any, bool, error) {
		mapping, err := mapper.RESTMapping(gk)
		if err != nil {
			return nil, false, err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(mapping.GroupVersionKind)
		switch err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); {
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
		return u.Object, true, nil
	}
}

// ClaimedPolicyStored asks, through lookup, whether the policy a claim was taken for is
// stored (for claims.Claimer.Sweep): key is the claim's conflict key, whose first word is the
// policy's kind as ClaimKeys writes it (group/Kind), and holder the policy, namespace/name.
// A kind the API server no longer serves, or a key not of ClaimKeys' making, has no stored
// policy.
func ClaimedPolicyStored(lookup Lookup) func(ctx context.Context, key, holder string) (bool, error) {
	return func(ctx context.Context, key, holder string) (bool, error) {
		kind, _, _ := strings.Cut(key, " ")
		group, name, ok := strings.Cut(kind, "/")
		if !ok || name == "" {
			return false, nil
		}
		namespace, policyName, _ := strings.Cut(holder, "/")
		ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
		defer cancel()
		_, found, err := lookup(ctx, schema.GroupKind{Group: group, Kind: name}, namespace, policyName)
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return found, err
	}
}
