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
// A released claim is kept, without a holder, for a while (Collect removes it later): the
// next review at that key knows a policy may just have been stored there, which its own
// replica's watch may not have delivered yet, and reads the API server first. A key with no
// Lease saw no admission for at least that while.
package claims

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	release = func(admitted bool) { c.release(held, owner, admitted) }
	for _, name := range leaseNames(keys) {
		lease, storedHolder, err := c.acquire(ctx, name.lease, name.key, owner, stored)
		if err != nil {
			release(false)
			return nil, nil, err
		}
		held = append(held, lease)
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
		created, err := c.Leases.Create(ctx, c.lease(name, key, owner, nil), metav1.CreateOptions{})
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
			updated, err := c.Leases.Update(ctx, c.lease(name, key, owner, current), metav1.UpdateOptions{})
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
			var kept []admission
			for _, a := range admittedOn(l) {
				if a.Policy != owner && c.clock().Sub(a.At) < KeepReleased {
					kept = append(kept, a)
				}
			}
			kept = append(kept, admission{Policy: owner, At: now.Time.UTC().Truncate(time.Second)})
			if len(kept) > maxAdmitted {
				kept = kept[len(kept)-maxAdmitted:]
			}
			data, _ := json.Marshal(kept)
			released.Annotations[AnnotationAdmitted] = string(data)
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

// Collect deletes the claims released more than KeepReleased ago, and those expired as
// long (left by a replica that died), each only as it was read.
func (c *Claimer) Collect(ctx context.Context) error {
	list, err := c.Leases.List(ctx, metav1.ListOptions{LabelSelector: LabelClaim + "=true"})
	if err != nil {
		return err
	}
	for i := range list.Items {
		l := &list.Items[i]
		if l.Spec.RenewTime != nil {
			age := c.clock().Sub(l.Spec.RenewTime.Time)
			held := l.Spec.HolderIdentity != nil
			if (!held && age < KeepReleased) || (held && age < c.duration()+KeepReleased) {
				continue
			}
		}
		uid, version := l.UID, l.ResourceVersion
		err := c.Leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// IsBusy reports a BusyError.
func IsBusy(err error) bool {
	var busy *BusyError
	return errors.As(err, &busy)
}
