package clusterstate

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Store is the webhook's view of the cluster: an indexed index.Snapshot fed by
// list and watch events (feed.go), each object parsed once on arrival. Reviews read it without copies.
//
// A policy review, when allowed, is reserved: the allowed policy enters the snapshot at
// once, before the API server stores it and the watch reports it. (Judge reaches the
// verdict under the read lock and judges again under the write lock if anything changed
// in between.) So `kubectl apply -f` of two conflicting policies rejects the second every
// time, and two reviews in flight for one conflict key cannot both be admitted. A
// reservation the watch never confirms (another webhook rejected the write) expires.
type Store struct {
	mu       sync.RWMutex
	table    *kinds.KindTable
	config   *rules.Config
	snap     *index.Snapshot
	reserved map[policyID]time.Time
	// releases give back the claims (package claims) a reserved policy was judged under,
	// once the watch confirms it or its reservation ends otherwise.
	releases map[policyID]heldClaims
	// deleting marks policies whose DELETE this webhook admitted: they had been stored, so
	// a live read that no longer finds them proves them gone even if still reserved.
	deleting map[policyID]time.Time
	// forgotten holds the policies a live read proved deleted before their watch event
	// arrived, by UID: an add or update of that same object still in the watch stream must
	// not bring it back (a policy created again under the name has another UID).
	forgotten map[policyID]forgottenPolicy
	ready     atomic.Bool
	// draining: shutting down (SetDraining).
	draining atomic.Bool
	now      func() time.Time
	// observed are what the controllers wrote into the stored policies' status, compared
	// with the predictions by the periodic audit (predictions.go).
	observed impact.Observations
	// generation counts the changes of what a verdict reads (the snapshot, reservations
	// included, the config and the kind table); Judge compares it to know whether the
	// verdict it reached under the read lock still holds when it reserves. Writes that change
	// none of those (the deletion marks, a periodic expiry that found nothing) leave it, so a
	// review is judged again only when the state it was judged on did change.
	generation uint64
	// beforeReserve, set by tests only, runs between a verdict and its reservation: where
	// a watch event or another review can change the state.
	beforeReserve func()
}

type forgottenPolicy struct {
	uid string
	at  time.Time
}

type policyID struct {
	kind            schema.GroupKind
	namespace, name string
}

// ReservationTTL bounds how long an admitted policy waits for its watch event.
const ReservationTTL = 30 * time.Second

// NewStore returns a store over a kind table and an initial snapshot.
func NewStore(table *kinds.KindTable, snap *index.Snapshot) *Store {
	return &Store{table: table, snap: snap, reserved: map[policyID]time.Time{}, releases: map[policyID]heldClaims{}, deleting: map[policyID]time.Time{},
		forgotten: map[policyID]forgottenPolicy{}, now: time.Now}
}

// UseConfig sets the enforcement modes and message settings every verdict applies; call
// it before serving.
func (s *Store) UseConfig(config *rules.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation++
	s.config = config
}

// Row returns the kind row for a policy kind.
func (s *Store) Row(gk schema.GroupKind) (*kinds.KindRow, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.table.Lookup(gk)
}

// AddRow adds a policy kind discovered while running.
func (s *Store) AddRow(row kinds.KindRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.table.Lookup(row.GroupKind()); ok {
		return nil // built-in and configured rows are more precise than discovered ones
	}
	s.generation++
	return s.table.Put(row)
}

// UseRow replaces the row of a kind the store knows (a built-in row by the row derived from
// its installed CRD, or back), and has the stored policies of the kind judged by it from
// now on.
func (s *Store) UseRow(row kinds.KindRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.table.Put(row); err != nil {
		return err
	}
	s.generation++
	gk := row.GroupKind()
	r, _ := s.table.Lookup(gk)
	for _, p := range s.snap.Policies() { // every policy: installed CRDs change rarely
		if p.GroupKind() == gk {
			c := *p // a copy: a review may still read p under its own lock's reading
			c.Row = r
			s.snap.PutPolicyAsIs(&c)
		}
	}
	return nil
}

// Judge evaluates a request and, when reserve is set and the write is allowed, reserves
// the policy in the snapshot. It reports false, and reserves nothing, when ctx ended first:
// the caller has already given up on the review.
//
// The verdict is reached under the read lock, so reviews are judged in parallel; only the
// reservation takes the write lock. If anything changed in between (generation moved: a
// watch event, another review's reservation), the review is judged again under the write
// lock before it reserves, so two reviews in flight for one conflict key can never both be
// admitted.
func (s *Store) Judge(ctx context.Context, req rules.Request, reserve bool) (rules.Verdict, bool) {
	if ctx.Err() != nil {
		return rules.Verdict{}, false
	}
	s.mu.RLock()
	judgedAt := s.generation
	v := s.evaluate(req)
	s.mu.RUnlock()
	if ctx.Err() != nil {
		return rules.Verdict{}, false
	}
	if !reserve || !v.Allowed() || req.Operation == rules.Delete || req.Policy == nil {
		return v, true
	}
	if s.beforeReserve != nil {
		s.beforeReserve()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.generation != judgedAt {
		judgesAgain.Inc()
		if v = s.evaluate(req); ctx.Err() != nil {
			return rules.Verdict{}, false
		}
		if !v.Allowed() {
			return v, true
		}
	}
	s.generation++
	s.snap.PutPolicyAsIs(req.Policy)
	s.reserved[idOf(req.Policy)] = s.now()
	return v, true
}

// evaluate judges a request against the snapshot; the caller holds s.mu.
func (s *Store) evaluate(req rules.Request) rules.Verdict {
	req.Config = s.config
	return rules.Evaluate(req, s.snap)
}

// Upsert applies a watch add or update.
func (s *Store) Upsert(gk schema.GroupKind, obj map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upsert(gk, obj)
}

// upsert is Upsert; the caller holds s.mu.
func (s *Store) upsert(gk schema.GroupKind, obj map[string]any) {
	s.generation++
	if row, ok := s.table.Lookup(gk); ok {
		p := policy.NewPolicy(row, obj)
		if f, ok := s.forgotten[idOf(p)]; ok {
			if p.UID != "" && p.UID == f.uid {
				return // a stale event of a policy the API server no longer has
			}
			delete(s.forgotten, idOf(p))
		}
		s.snap.PutPolicy(p)
		s.observed.Add(p, obj)
		delete(s.reserved, idOf(p))
		s.releaseHeld(idOf(p), s.isHeldFor(idOf(p), p))
		return
	}
	_, _ = s.snap.AddResource(gk, obj) // a malformed ReferenceGrant cannot be indexed; skip it
}

// Remove applies a watch delete.
func (s *Store) Remove(gk schema.GroupKind, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation++
	if _, ok := s.table.Lookup(gk); ok {
		s.removePolicy(policyID{gk, namespace, name})
		delete(s.forgotten, policyID{gk, namespace, name})
		return
	}
	if gk == (schema.GroupKind{Group: kinds.GatewayGroup, Kind: "ReferenceGrant"}) {
		s.snap.RemoveReferenceGrant(namespace, name)
		return
	}
	s.snap.RemoveObject(policy.TargetKey{Group: gk.Group, Kind: gk.Kind, Namespace: namespace, Name: name})
}

// Forget removes a policy that a live read found deleted (or being deleted) while the
// watch has not said so yet, and ignores that object's events still on their way.
func (s *Store) Forget(p *policy.Policy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation++
	id := idOf(p)
	s.removePolicy(id)
	s.forgotten[id] = forgottenPolicy{uid: p.UID, at: s.now()}
}

func (s *Store) removePolicy(id policyID) {
	s.snap.RemovePolicy(id.kind, id.namespace, id.name)
	s.observed.Remove(id.kind, id.namespace, id.name)
	delete(s.reserved, id)
	delete(s.deleting, id)
	s.releaseHeld(id, false)
}

// Hold keeps release until the watch confirms p, which Judge has just reserved, or its
// reservation ends otherwise; then calls it. Without a reservation it calls it at once.
// The caller must not hold s.mu.
func (s *Store) Hold(p *policy.Policy, release func(admitted bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := idOf(p)
	if _, ok := s.reserved[id]; !ok {
		go release(false)
		return
	}
	s.releaseHeld(id, false) // an earlier review of the same policy
	s.releases[id] = heldClaims{release: release, spec: specOf(p)}
}

// heldClaims are the claims a reserved policy was judged under, and the spec judged.
type heldClaims struct {
	release func(admitted bool)
	spec    []byte
}

// specOf is p's spec as canonical JSON (sorted keys; a number as written, whether decoded as
// an integer or a float), so that a review's spec and its watch event's compare equal.
func specOf(p *policy.Policy) []byte {
	b, err := json.Marshal(p.Spec())
	if err != nil {
		return nil
	}
	return b
}

// isHeldFor says whether stored, the policy the API server stores under id, is the one its
// held claims were judged for: the same spec. A watch event or a read of a policy that was
// stored, but not as reviewed (a review forged straight to a pod, naming a stored policy with
// other targets), does not admit the claims: they are given back as never admitted, and
// claims for targets no stored policy has leave no Lease behind.
func (s *Store) isHeldFor(id policyID, stored *policy.Policy) bool {
	held, ok := s.releases[id]
	if !ok {
		return false
	}
	spec := specOf(stored)
	return held.spec != nil && spec != nil && bytes.Equal(held.spec, spec)
}

// releaseHeld gives back the claims held for id, off the lock (a release is an API call),
// saying whether the policy was stored as judged.
func (s *Store) releaseHeld(id policyID, admitted bool) {
	if held, ok := s.releases[id]; ok {
		delete(s.releases, id)
		go held.release(admitted)
	}
}

// ClaimKeys returns p's conflict keys: its kind and each object it attaches to (by name or
// by label selector), for claims across replicas. A kind whose policies never conflict has
// none.
func (s *Store) ClaimKeys(p *policy.Policy) []string {
	if p.Row.Conflicts.Mode == kinds.ConflictsNever {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []string
	for _, t := range topology.Targets(s.snap, p) {
		k := t.Key
		if k.Name == "" {
			continue
		}
		key := p.Row.Group + "/" + p.Row.Kind + " " + k.Group + "/" + k.Kind + "/" + k.Namespace + "/" + k.Name
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// ExpireReservations drops reservations older than ReservationTTL that no watch event
// confirmed, and returns how many it dropped.
func (s *Store) ExpireReservations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, at := range s.deleting {
		if s.now().Sub(at) > ReservationTTL {
			delete(s.deleting, id)
		}
	}
	for id, f := range s.forgotten {
		if s.now().Sub(f.at) > ReservationTTL {
			delete(s.forgotten, id)
		}
	}
	for id, at := range s.reserved {
		if s.now().Sub(at) > ReservationTTL {
			s.snap.RemovePolicy(id.kind, id.namespace, id.name)
			delete(s.reserved, id)
			s.releaseHeld(id, false)
			n++
		}
	}
	if n > 0 {
		s.generation++
	}
	return n
}

// Predict computes the impact p would have if stored now, without storing it, and its
// one-sentence summary, as the mutating webhook writes them (impact.Impact.ForAnnotation,
// impact.Impact.AnnotatedSummary).
func (s *Store) Predict(p *policy.Policy) (impact.Impact, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	msgs := s.messages()
	im := impact.Predict(topology.WithPolicy(s.snap, p), p, nil).ForAnnotation(p, msgs)
	return im, im.AnnotatedSummary(p, msgs)
}

// MarkDeleting records that this webhook admitted the DELETE of a policy.
func (s *Store) MarkDeleting(gk schema.GroupKind, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleting[policyID{gk, namespace, name}] = s.now()
}

// Others returns the policies of p's kind at p's attachment points, other than p, that a
// live read may verify: those the watch confirmed, or whose DELETE was admitted. A
// reservation of a create still in flight is never verifiable (it is not stored yet).
func (s *Store) Others(p *policy.Policy) []*policy.Policy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*policy.Policy
	seen := map[policyID]bool{}
	for _, key := range topology.TargetKeys(s.snap, p) {
		for _, q := range s.snap.PoliciesAt(p.GroupKind(), key) {
			id := idOf(q)
			if seen[id] || (q.Namespace == p.Namespace && q.Name == p.Name) {
				continue
			}
			seen[id] = true
			_, reserved := s.reserved[id]
			_, deleting := s.deleting[id]
			if !reserved || deleting {
				out = append(out, q)
			}
		}
	}
	return out
}

// Has reports whether the store holds a policy.
func (s *Store) Has(gk schema.GroupKind, namespace, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.snap.GetPolicy(gk, namespace, name)
	return ok
}

// CountOthersIn counts the policies of p's kind the store holds in a namespace, p aside.
func (s *Store) CountOthersIn(p *policy.Policy, namespace string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, q := range s.snap.PoliciesIn(p.GroupKind(), namespace) {
		if q.Namespace != p.Namespace || q.Name != p.Name {
			n++
		}
	}
	return n
}

// HasOthersAt reports whether the store holds another policy of p's kind at any of p's
// attachment points.
func (s *Store) HasOthersAt(p *policy.Policy) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, key := range topology.TargetKeys(s.snap, p) {
		for _, q := range s.snap.PoliciesAt(p.GroupKind(), key) {
			if q.Namespace != p.Namespace || q.Name != p.Name {
				return true
			}
		}
	}
	return false
}

// DeletionWarning describes what deleting a stored policy removes ("" if it is not stored).
func (s *Store) DeletionWarning(gk schema.GroupKind, namespace, name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.snap.GetPolicy(gk, namespace, name)
	if !ok {
		return ""
	}
	return impact.PolicyDeletionWarning(s.snap, p)
}

// GrantDeletionWarning describes what deleting a ReferenceGrant breaks ("" if nothing).
func (s *Store) GrantDeletionWarning(g *gatewayv1.ReferenceGrant) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return impact.GrantDeletionWarning(s.snap, s.table, s.messages(), g)
}

// messages is the configured Messages (nil: the defaults); the caller holds the lock.
func (s *Store) messages() *validation.Messages {
	if s.config == nil {
		return nil
	}
	return &s.config.Messages
}

// auditChunk is how many policies an audit judges per read lock, so reviews (which take
// the write lock) never wait behind a whole audit.
const auditChunk = 200

// Audit replays the stored policies in GEP-713 order (impact.Auditor) and returns the ones
// the rules would deny today, and how many it audited.
func (s *Store) Audit() (findings []impact.Finding, audited int) {
	s.mu.RLock()
	policies := s.snap.Policies()
	config := s.config
	s.mu.RUnlock()
	impact.SortForAudit(policies)
	a := impact.NewAuditor(config)
	for start := 0; start < len(policies); start += auditChunk {
		s.mu.RLock()
		for _, p := range policies[start:min(start+auditChunk, len(policies))] {
			if f, ok := a.Judge(s.snap, p); ok {
				findings = append(findings, f)
			}
		}
		s.mu.RUnlock()
	}
	return findings, len(policies)
}

// SetReady marks every kind the rules read as listed.
func (s *Store) SetReady() { s.ready.Store(true) }

// Ready reports whether the store has synced.
func (s *Store) Ready() bool { return s.ready.Load() }

// SetDraining marks the process as shutting down: readiness turns false, so the endpoint
// leaves the Service while reviews still come in.
func (s *Store) SetDraining() { s.draining.Store(true) }

// Draining reports whether SetDraining was called.
func (s *Store) Draining() bool { return s.draining.Load() }

func idOf(p *policy.Policy) policyID {
	return policyID{p.GroupKind(), p.Namespace, p.Name}
}

// SetClock replaces the clock that dates reservations, deletion marks and changes; for
// tests that need those dates fixed.
func (s *Store) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}
