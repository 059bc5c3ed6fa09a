package clusterstate

import (
	"context"
	"errors"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/internal/reviewlog"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Reviewer judges policy writes against the store, reading the API server where the
// store may be behind. Its Review is the whole path of a verdict:
//  0. claim: a write that could conflict claims its conflict keys across replicas first
//     (Claims), waiting while another policy's review holds one; the claims are given back
//     when the watch confirms the policy, or at once when it is not admitted;
//  1. prepare: when the store holds no other policy of the kind at the policy's
//     attachment points (the moment a policy just admitted through another replica may not
//     have reached this one's watch yet), list the kind live and feed what the store lacks;
//  2. judge: rules.Evaluate against the store, under its read lock, and reserve the
//     policy when it is admitted (Store.Judge);
//  3. only when the verdict is Conflicted: confirm, live, that the policies it rests on
//     still exist, forget those already deleted, and judge once more.
//
// A failed or slow read never fails the review: it is logged and counted, and the verdict
// rests on the store.
type Reviewer struct {
	Store *Store
	// Live reads from the API server; nil judges on the store alone (one replica only).
	Live client.Reader
	// Claims serializes conflicting writes across replicas; nil claims nothing (one
	// replica only: its store serializes its own reviews).
	Claims Claims
}

// Claims takes claims on conflict keys for a policy (its namespace/name) (package claims):
// release gives them back, saying whether the policy was admitted and stored; recent are
// the policies admitted at those keys lately, through any replica.
type Claims interface {
	Claim(ctx context.Context, owner string, keys []string, stored func(ctx context.Context, policy string) bool) (release func(admitted bool), recent []string, err error)
}

// ErrDeadline is a review whose context ended before it was judged.
var ErrDeadline = errors.New("the review's deadline passed")

// Review judges req (for a policy of gvk) and, when reserve is set (not a dry run) and the
// write is admitted, reserves the policy in the store. It fails with ErrDeadline when ctx
// ended first, and with the claim's error when a claim could not be taken: the write must
// then be refused, never admitted unchecked.
func (r *Reviewer) Review(ctx context.Context, gvk schema.GroupVersionKind, req rules.Request, reserve bool) (rules.Verdict, error) {
	var release func(admitted bool)
	if reserve && r.Claims != nil && req.Policy != nil && req.Operation != rules.Delete {
		if keys := r.Store.ClaimKeys(req.Policy); len(keys) > 0 {
			var recent []string
			var err error
			if release, recent, err = r.Claims.Claim(ctx, req.Policy.Namespace+"/"+req.Policy.Name, keys, r.storedFunc(gvk)); err != nil {
				if !claimsBusy(err) && ctx.Err() != nil {
					return rules.Verdict{}, ErrDeadline // the review's deadline, met while claiming
				}
				return rules.Verdict{}, err
			}
			// The policies admitted at the keys lately, through any replica, may be stored
			// and not yet watched here: each is read, by name, from the API server. Every
			// other policy at the keys was admitted long enough ago to be watched here.
			r.fetch(ctx, gvk, recent)
		}
	}
	if release == nil {
		r.prepare(ctx, gvk, req.Policy, req.Operation == rules.Update)
	}
	verdict, ok := r.Store.Judge(ctx, req, reserve)
	if ok && hasReason(verdict, validation.ReasonConflicted) && r.dropDeleted(ctx, gvk, req.Policy) {
		verdict, ok = r.Store.Judge(ctx, req, reserve) // the conflict was with a policy already gone
	}
	if release != nil {
		if ok && verdict.Allowed() {
			r.Store.Hold(req.Policy, release)
		} else {
			go release(false)
		}
	}
	if !ok {
		return rules.Verdict{}, ErrDeadline
	}
	return verdict, nil
}

// storedFunc asks the API server whether a policy of gvk (namespace/name) is stored.
func (r *Reviewer) storedFunc(gvk schema.GroupVersionKind) func(context.Context, string) bool {
	if r.Live == nil {
		return nil
	}
	return func(ctx context.Context, ref string) bool {
		namespace, name, _ := strings.Cut(ref, "/")
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(gvk)
		return r.Live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, meta) == nil
	}
}

// claimsBusy reports an error that says which policy a claim waited for (package claims
// words it; the review's deadline is then not the whole story).
func claimsBusy(err error) bool {
	var busy interface{ BusyHolder() string }
	return errors.As(err, &busy)
}

// fetch reads the named policies of gvk (namespace/name) from the API server and feeds
// those it finds into the store; a failed read is logged and counted, and the review is
// judged on the store.
func (r *Reviewer) fetch(ctx context.Context, gvk schema.GroupVersionKind, names []string) {
	if r.Live == nil || len(names) == 0 {
		return
	}
	ctx, cancel := liveContext(ctx)
	defer cancel()
	for _, ref := range names {
		namespace, name, _ := strings.Cut(ref, "/")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := r.Live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
			if !apierrors.IsNotFound(err) {
				liveReadFailed(ctx, err, "get", gvk, namespace, name)
			}
			continue
		}
		r.Store.Upsert(gvk.GroupKind(), u.Object)
	}
}

// LiveReadTimeout bounds the live read of one review, well inside the webhook timeout, so
// the webhook always answers: past it, the review is judged on the cache alone.
const LiveReadTimeout = 2 * time.Second

// liveContext bounds a live read by LiveReadTimeout and by half of what is left of the
// review's deadline, so a slow API server leaves time to judge on the cache and answer.
func liveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := LiveReadTimeout
	if deadline, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(deadline)/2)
	}
	return context.WithTimeout(ctx, limit)
}

// prepare closes the gap between replicas without claims: when the store holds no other
// policy of the kind at any of p's attachment points, it lists that kind in the namespaces
// concerned straight from the API server and feeds what it finds into the store.
//
// A kind whose policies never conflict reads nothing: no other policy can change its
// verdict, and the read is a consistent List, which on a busy API server waits up to 100 ms
// for the watch cache to catch up (BENCHMARKS.md, "The claims-off latency cliff").
func (r *Reviewer) prepare(ctx context.Context, gvk schema.GroupVersionKind, p *policy.Policy, stored bool) {
	if r.Live == nil || p.Row.Conflicts.Mode == kinds.ConflictsNever || r.Store.HasOthersAt(p) {
		return
	}
	ctx, cancel := liveContext(ctx)
	defer cancel()
	namespaces := map[string]bool{p.Namespace: true}
	for _, ref := range p.TargetRefs {
		if key := p.Key(ref); key.Namespace != "" {
			namespaces[key.Namespace] = true
		}
	}
	for ns := range namespaces {
		if r.sameCount(ctx, gvk, ns, p, stored) {
			continue
		}
		// Names only: the common answer is "nothing the cache lacks", and metadata is a
		// fraction of the bytes. Only policies the store does not hold are read in full.
		names := &metav1.PartialObjectMetadataList{}
		names.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Live.List(ctx, names, client.InNamespace(ns)); err != nil {
			liveReadFailed(ctx, err, "list", gvk, ns, "")
			return // judged on the cache; the watch catches up
		}
		for i := range names.Items {
			item := &names.Items[i]
			if (item.Namespace == p.Namespace && item.Name == p.Name) || r.Store.Has(gvk.GroupKind(), item.Namespace, item.Name) {
				continue
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			if err := r.Live.Get(ctx, client.ObjectKey{Namespace: item.Namespace, Name: item.Name}, u); err != nil {
				if !apierrors.IsNotFound(err) { // deleted since the list: nothing to add
					liveReadFailed(ctx, err, "get", gvk, item.Namespace, item.Name)
				}
				continue
			}
			r.Store.Upsert(gvk.GroupKind(), u.Object)
		}
	}
}

// sameCount asks the API server how many policies of the kind the namespace holds, with a
// one-item List whose remainingItemCount gives the rest, and reports whether the store
// holds as many (p itself aside; stored says whether the API server holds p, as on an
// UPDATE). Equal counts are the common case and cost one small round trip instead of
// listing every name. A deletion and a creation at the same instant would also leave the
// counts equal; that creation then waits for the watch, as a policy admitted at the
// same instant through another replica does (docs/serve.md, "Across replicas").
func (r *Reviewer) sameCount(ctx context.Context, gvk schema.GroupVersionKind, namespace string, p *policy.Policy, stored bool) bool {
	probe := &metav1.PartialObjectMetadataList{}
	probe.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.Live.List(ctx, probe, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return false // the full read that follows reports the error
	}
	server := int64(len(probe.Items))
	switch {
	case probe.RemainingItemCount != nil:
		server += *probe.RemainingItemCount
	case probe.Continue != "":
		return false // more items, but no count: list them
	}
	if stored && namespace == p.Namespace {
		server-- // p itself
	}
	return server == int64(r.Store.CountOthersIn(p, namespace))
}

// dropDeleted verifies, live, the policies a Conflicted verdict may rest on, and removes from
// the store those the API server no longer has or is deleting (the watch has not caught
// up yet). It reports whether it removed any, so the review is judged again.
func (r *Reviewer) dropDeleted(ctx context.Context, gvk schema.GroupVersionKind, p *policy.Policy) bool {
	if r.Live == nil {
		return false
	}
	ctx, cancel := liveContext(ctx)
	defer cancel()
	dropped := false
	for _, q := range r.Store.Others(p) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := r.Live.Get(ctx, client.ObjectKey{Namespace: q.Namespace, Name: q.Name}, u)
		switch {
		case apierrors.IsNotFound(err), err == nil && u.GetDeletionTimestamp() != nil:
			r.Store.Forget(q)
			liveReadDropped.Inc()
			dropped = true
		case err != nil:
			liveReadFailed(ctx, err, "get", gvk, q.Namespace, q.Name)
			return dropped
		}
	}
	return dropped
}

// liveReadFailed counts and logs a live read that failed: the review is then judged on
// the cache, which may still hold a policy already deleted (a Conflicted denial naming it)
// or lack one just admitted through another replica.
func liveReadFailed(ctx context.Context, err error, verb string, gvk schema.GroupVersionKind, namespace, name string) {
	liveReadErrors.Inc()
	reviewlog.Logger(ctx).Error(err, "live read of the API server failed; judging on the cache",
		"verb", verb, "kind", gvk.Kind, "namespace", namespace, "name", name)
}

func hasReason(v rules.Verdict, reason string) bool {
	for _, e := range v.Denials {
		if validation.ReasonOf(e) == reason {
			return true
		}
	}
	return false
}
