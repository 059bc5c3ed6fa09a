// Package claims serializes, across the webhook's replicas, the reviews of policies that
// could conflict, with the cluster's own consistent store as the point of order. Before a
// replica judges a policy write, it claims each of the policy's conflict keys (the policy's
// kind and one object it attaches to): a coordination.k8s.io Lease in the webhook's
// namespace, created only if absent. A replica that finds a key claimed for another policy
// waits until the claim is released (the replica holding it saw that policy stored, or its
// write failed) or has expired (the replica holding it died), then judges with the other
// policy in view. Two conflicting policies are therefore never judged at the same time, on
// one replica or on several.
//
// A released claim is kept, without a holder, for a while (Sweep removes it later): the
// next review at that key knows a policy may just have been stored there, which its own
// replica's watch may not have delivered yet, and reads the API server first. A key with no
// Lease saw no admission for at least that while.
//
// No Lease outlives the review that took it. A claim is given back when its review ends
// (deleted when nothing was ever admitted under it): at once when the policy is not
// admitted, when the watch delivers the policy, or when the API server says it never stored
// it (package clusterstate asks after its confirm window). A Lease write is run to its end
// even when the review's deadline passes or its caller hangs up first, and a claim it took
// for a review that is over is given back at once: an abandoned write could still be applied
// by the API server, leaving a claim nobody knows of. What no replica gives back (its
// replica was killed mid-review, a write's answer was lost) expires after its duration, and
// Sweep, which every replica runs, deletes it then unless its policy is stored.
package claims

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Labels and annotations of a claim Lease.
const (
	// LabelClaim marks the Leases that are claims (`kubectl get leases -l ...`).
	LabelClaim = "policyattachment.io/claim"
	// AnnotationKey is the conflict key the Lease claims, for whoever reads it.
	AnnotationKey = "policyattachment.io/key"
	// AnnotationReplica names the replica that holds it.
	AnnotationReplica = "policyattachment.io/replica"
	// AnnotationAdmitted lists the policies admitted under the claim lately, as JSON
	// [{"policy": "namespace/name", "at": RFC 3339}], newest last.
	AnnotationAdmitted = "policyattachment.io/admitted"
)

// admission is one entry of AnnotationAdmitted.
type admission struct {
	Policy string    `json:"policy"`
	At     time.Time `json:"at"`
}

// maxAdmitted bounds AnnotationAdmitted; admissions at one key are serialized, so more
// than a few within KeepReleased is a policy rewritten in a loop.
const maxAdmitted = 16

// DefaultDuration is how long a claim lasts when its replica never releases it (the replica
// died mid-review). It outlasts any review and the API server's write after it (the
// configurations' timeoutSeconds is 5), so a claim is never taken over while its policy may
// still be stored.
const DefaultDuration = 10 * time.Second

// Claimer takes and releases claims.
type Claimer struct {
	// Leases is the Lease client of the namespace claims live in.
	Leases coordinationclient.LeaseInterface
	// Replica names this replica on its claims (the pod's name).
	Replica string
	// Duration is DefaultDuration when zero.
	Duration time.Duration
	// now is time.Now unless a test sets it.
	now func() time.Time
}

// BusyError is a claim that another policy held for longer than the review could wait.
type BusyError struct {
	// Holder is the policy the claim is held for.
	Holder string
}

// BusyHolder names the policy the claim was held for.
func (e *BusyError) BusyHolder() string { return e.Holder }

func (e *BusyError) Error() string {
	return fmt.Sprintf("the claim of %s was not given up within the review's deadline", e.Holder)
}

// Claim claims every key for owner (the policy under review as namespace/name; its kind is
// in every key), waiting while another policy holds one. It returns a release that gives up
// every claim taken, recording the policy when it was admitted (stored), and the policies
// admitted at the keys lately by any replica, owner aside, which only the API server may
// know of yet. When ctx ends while it waits, the error is a *BusyError; it releases what
// it took.
//
// stored reports whether a policy (namespace/name, of the owner's kind) is stored, asked of
// the API server: a review waiting on a claim takes it over as soon as the policy holding
// it is stored, without waiting for that replica's watch to release it.
func (c *Claimer) Claim(ctx context.Context, owner string, keys []string, stored func(ctx context.Context, policy string) bool) (release func(admitted bool), recent []string, err error) {
	var held []*coordinationv1.Lease
	var once sync.Once
	release = func(admitted bool) { once.Do(func() { c.release(held, owner, admitted) }) }
	for _, name := range leaseNames(keys) {
		lease, storedHolder, err := c.acquire(ctx, name.lease, name.key, owner, stored)
		if err != nil {
			release(false)
			return nil, nil, err
		}
		held = append(held, lease)
		claimsHeld.Inc()
		if storedHolder != "" && !slices.Contains(recent, storedHolder) {
			recent = append(recent, storedHolder)
		}
		for _, a := range admittedOn(lease) {
			if a.Policy != owner && c.clock().Sub(a.At) < KeepReleased && !slices.Contains(recent, a.Policy) {
				recent = append(recent, a.Policy)
			}
		}
	}
	claimsTaken.Add(float64(len(held)))
	return release, recent, nil
}

// admittedOn reads a Lease's AnnotationAdmitted (nothing when it is unreadable).
func admittedOn(l *coordinationv1.Lease) []admission {
	var out []admission
	_ = json.Unmarshal([]byte(l.Annotations[AnnotationAdmitted]), &out)
	return out
}

type leaseName struct{ lease, key string }

// leaseNames are the Leases of keys, each once, in one order for every replica (two
// reviews taking two keys in opposite orders would wait on each other until a deadline).
func leaseNames(keys []string) []leaseName {
	var out []leaseName
	for _, k := range keys {
		sum := sha256.Sum256([]byte(k))
		out = append(out, leaseName{lease: "policyattachment-claim-" + hex.EncodeToString(sum[:10]), key: k})
	}
	slices.SortFunc(out, func(a, b leaseName) int { return compare(a.lease, b.lease) })
	return slices.CompactFunc(out, func(a, b leaseName) bool { return a.lease == b.lease })
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pollInterval is how often a waiting review looks at a claim another policy holds; the
// wait is as long as the other review plus its write, typically milliseconds.
const pollInterval = 10 * time.Millisecond

// storedCheckEvery is how many polls apart a waiting review asks whether the policy
// holding the claim is stored.
const storedCheckEvery = 5

// acquire takes one Lease: creates it, or takes it over when it is released, this
// policy's already (a retry of the same write), expired, or held for a policy already
// stored (then named in storedHolder); otherwise waits.
func (c *Claimer) acquire(ctx context.Context, name, key, owner string, stored func(context.Context, string) bool) (lease *coordinationv1.Lease, storedHolder string, err error) {
	waited, holder, polls := false, "", 0
	defer func() {
		if waited {
			claimsWaited.Inc()
		}
	}()
	for {
		created, err := c.write(ctx, owner, func(ctx context.Context) (*coordinationv1.Lease, error) {
			return c.Leases.Create(ctx, c.lease(name, key, owner, nil), metav1.CreateOptions{})
		})
		if err == nil {
			return created, "", nil
		}
		if waited && ctx.Err() != nil {
			return nil, "", &BusyError{Holder: holder}
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, "", c.failed(ctx, err, owner)
		}
		current, err := c.Leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // released meanwhile
		}
		if waited && ctx.Err() != nil {
			return nil, "", &BusyError{Holder: holder}
		}
		if err != nil {
			return nil, "", c.failed(ctx, err, owner)
		}
		holder = ""
		if current.Spec.HolderIdentity != nil {
			holder = *current.Spec.HolderIdentity
		}
		// The holder's replica releases the claim when its watch delivers the policy; the
		// API server knows sooner, and a replica whose watch of the kind is not running yet
		// (a kind just discovered, read access just granted) would not release it at all.
		holderStored := waited && holder != "" && holder != owner && polls%storedCheckEvery == 0 && stored != nil && stored(ctx, holder)
		if holder == "" || holder == owner || c.expired(current) || holderStored {
			if holder != "" && holder != owner && !holderStored {
				claimsTakenOver.Inc()
			}
			updated, err := c.write(ctx, owner, func(ctx context.Context) (*coordinationv1.Lease, error) {
				return c.Leases.Update(ctx, c.lease(name, key, owner, current), metav1.UpdateOptions{})
			})
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue // another replica moved first: look again
			}
			if err != nil {
				return nil, "", c.failed(ctx, err, owner)
			}
			if holderStored {
				return updated, holder, nil
			}
			return updated, "", nil
		}
		waited = true
		polls++
		select {
		case <-ctx.Done():
			return nil, "", &BusyError{Holder: holder}
		case <-time.After(pollInterval):
		}
	}
}

// write runs op, a Lease create or update that takes a claim for owner, to its end even when
// ctx (the review's) ends first: the API server may apply a write whose caller gave up, and
// the claim it took would then be held for a review that is over, until it expired. When ctx
// ends first, the claim, if the write took one, is given back as soon as the write returns,
// and ctx's error returned at once. A write gets releaseTimeout of its own; one whose answer
// is lost even so expires, and Sweep deletes it.
func (c *Claimer) write(ctx context.Context, owner string, op func(context.Context) (*coordinationv1.Lease, error)) (*coordinationv1.Lease, error) {
	type result struct {
		lease *coordinationv1.Lease
		err   error
	}
	if err := ctx.Err(); err != nil {
		return nil, err // over already: nothing to take
	}
	done := make(chan result, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		l, err := op(wctx)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		return r.lease, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				claimsHeld.Inc()
				claimsTakenLate.Inc()
				c.release([]*coordinationv1.Lease{r.lease}, owner, false)
			}
		}()
		return nil, ctx.Err()
	}
}

// failed turns an error of the API server into the review's: ctx's end is a BusyError
// only while waiting; otherwise the claim could not be written.
func (c *Claimer) failed(ctx context.Context, err error, owner string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("claiming the attachment points of %s: %w", owner, ctx.Err())
	}
	return fmt.Errorf("claiming the attachment points of %s (a Lease in the webhook's namespace; the webhook's Role must allow get, create, update and delete on leases there): %w", owner, err)
}

func (c *Claimer) duration() time.Duration {
	if c.Duration > 0 {
		return c.Duration
	}
	return DefaultDuration
}

func (c *Claimer) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// expired reports a claim its replica stopped renewing: past its renewTime by its duration.
func (c *Claimer) expired(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return c.clock().After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// lease is the claim of key for owner, replacing current when given.
func (c *Claimer) lease(name, key, owner string, current *coordinationv1.Lease) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	if current != nil {
		l = current.DeepCopy()
	}
	l.Name = name
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[LabelClaim] = "true"
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationKey] = key
	l.Annotations[AnnotationReplica] = c.Replica
	now := metav1.NewMicroTime(c.clock())
	seconds := int32(c.duration() / time.Second)
	l.Spec = coordinationv1.LeaseSpec{HolderIdentity: &owner, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}
	return l
}

// releaseTimeout bounds giving claims back; one that fails expires.
const releaseTimeout = 5 * time.Second

// release clears the holder of each Lease, only while it is still the one taken (another
// replica may have taken it over after it expired, or this policy's retry through another
// replica): the update carries the resourceVersion it was taken at.
func (c *Claimer) release(held []*coordinationv1.Lease, owner string, admitted bool) {
	if len(held) == 0 {
		return
	}
	claimsHeld.Sub(float64(len(held)))
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for _, l := range held {
		if !admitted && len(admittedOn(l)) == 0 {
			// Nothing was ever admitted under it: a released claim would tell the next review
			// nothing, so it is deleted (a review that never came through the API server
			// leaves no Lease behind).
			uid, version := l.UID, l.ResourceVersion
			err := c.Leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}})
			switch {
			case err == nil:
				claimsReleased.Inc()
			case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			default:
				claimReleaseErrors.Inc()
			}
			continue
		}
		released := l.DeepCopy()
		now := metav1.NewMicroTime(c.clock())
		released.Spec.HolderIdentity = nil
		released.Spec.RenewTime = &now
		if admitted {
			released.Annotations = recordAdmission(released.Annotations, admittedOn(l), owner, now.Time)
		}
		_, err := c.Leases.Update(ctx, released, metav1.UpdateOptions{})
		switch {
		case err == nil:
			claimsReleased.Inc()
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			claimReleaseErrors.Inc()
		}
	}
}

// KeepReleased is how long a released claim is kept: far longer than any replica's watch
// takes to deliver the policy it was released for.
const KeepReleased = time.Minute

// Stored reports whether the policy a claim was taken for is stored, asked of the API
// server: holder is the policy (namespace/name), key the conflict key it claimed (its kind
// is in it). An error leaves the claim for the next sweep.
type Stored func(ctx context.Context, key, holder string) (bool, error)

// Sweep ends, from the Leases as they are read, every claim its review no longer needs:
//   - a released claim kept for KeepReleased is deleted;
//   - a claim still held past its duration (the replica holding it died mid-review, or
//     lost the answer of the write that took it) is given back as that replica would
//     have: released recording its policy when stored says the policy is stored, deleted
//     when it is not and nothing was admitted under the claim within KeepReleased,
//     released otherwise.
//
// Each change carries the resourceVersion read, so a claim taken or renewed meanwhile is
// left alone. It publishes the claims it read, held and released, and returns the first
// error of the API server; what failed is tried again by the next sweep.
func (c *Claimer) Sweep(ctx context.Context, stored Stored) error {
	list, err := c.Leases.List(ctx, metav1.ListOptions{LabelSelector: LabelClaim + "=true"})
	if err != nil {
		claimSweepErrors.Inc()
		return fmt.Errorf("listing the claims (the webhook's Role must allow list on leases in its namespace): %w", err)
	}
	var first error
	remaining := map[string]int{"held": 0, "released": 0}
	for i := range list.Items {
		l := &list.Items[i]
		state, err := c.sweep(ctx, l, stored)
		if err != nil {
			claimSweepErrors.Inc()
			if first == nil {
				first = err
			}
		}
		if state != "" {
			remaining[state]++
		}
	}
	for state, n := range remaining {
		claimLeases.WithLabelValues(state).Set(float64(n))
	}
	return first
}

// sweep ends one claim if its review no longer needs it, and says what is left of it:
// "held", "released" or "" (deleted).
func (c *Claimer) sweep(ctx context.Context, l *coordinationv1.Lease, stored Stored) (string, error) {
	now := c.clock()
	held := l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
	switch {
	case l.Spec.RenewTime == nil && held:
		return c.remove(ctx, l, true, "held")
	case l.Spec.RenewTime == nil:
		return c.remove(ctx, l, false, "released")
	case !held:
		if now.Sub(l.Spec.RenewTime.Time) < KeepReleased {
			return "released", nil
		}
		return c.remove(ctx, l, false, "released")
	case !c.expired(l):
		return "held", nil // a review holds it
	}
	holder := *l.Spec.HolderIdentity
	isStored := false
	if stored != nil {
		var err error
		if isStored, err = stored(ctx, l.Annotations[AnnotationKey], holder); err != nil {
			return "held", fmt.Errorf("asking whether %s, which claim %s was taken for, is stored: %w", holder, l.Name, err)
		}
	}
	recent := false
	for _, a := range admittedOn(l) {
		recent = recent || now.Sub(a.At) < KeepReleased
	}
	if !isStored && !recent {
		return c.remove(ctx, l, true, "held")
	}
	released := l.DeepCopy()
	renewed := metav1.NewMicroTime(now)
	released.Spec.HolderIdentity = nil
	released.Spec.RenewTime = &renewed
	if isStored {
		released.Annotations = recordAdmission(released.Annotations, admittedOn(l), holder, now)
	}
	switch _, err := c.Leases.Update(ctx, released, metav1.UpdateOptions{}); {
	case err == nil:
		claimsAbandoned.Inc()
		return "released", nil
	case apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsConflict(err):
		return "held", nil // taken or given back meanwhile: the next sweep reads it again
	default:
		return "held", fmt.Errorf("releasing claim %s, left by a replica that died: %w", l.Name, err)
	}
}

// remove deletes a claim as it was read; abandoned says it was still held. It says what is
// left: nothing, or the claim in state when it was changed meanwhile or the delete failed.
func (c *Claimer) remove(ctx context.Context, l *coordinationv1.Lease, abandoned bool, state string) (string, error) {
	uid, version := l.UID, l.ResourceVersion
	err := c.Leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}})
	switch {
	case err == nil:
		if abandoned {
			claimsAbandoned.Inc()
		}
		return "", nil
	case apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsConflict(err):
		return state, nil // changed meanwhile: the next sweep reads it again
	default:
		return state, fmt.Errorf("deleting claim %s: %w", l.Name, err)
	}
}

// recordAdmission returns annotations with AnnotationAdmitted recording policy admitted at
// at, after the admissions of earlier that are still recent (policy's own dropped).
func recordAdmission(annotations map[string]string, earlier []admission, policy string, at time.Time) map[string]string {
	var kept []admission
	for _, a := range earlier {
		if a.Policy != policy && at.Sub(a.At) < KeepReleased {
			kept = append(kept, a)
		}
	}
	kept = append(kept, admission{Policy: policy, At: at.UTC().Truncate(time.Second)})
	if len(kept) > maxAdmitted {
		kept = kept[len(kept)-maxAdmitted:]
	}
	data, _ := json.Marshal(kept)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationAdmitted] = string(data)
	return annotations
}

// IsBusy reports a BusyError.
func IsBusy(err error) bool {
	var busy *BusyError
	return errors.As(err, &busy)
}
