package clusterstate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func btls(name string) string {
	return fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %q, "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}],
		         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`, name)
}

// judge reviews the CREATE of a policy document (JSON) as the validating webhook does, with
// no live reads, reserving it when admitted unless dryRun.
func judge(t *testing.T, store *Store, doc string, dryRun bool) rules.Verdict {
	t.Helper()
	obj := decodeJSON(t, doc)
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	require.NoError(t, err)
	gvk := gv.WithKind(obj["kind"].(string))
	row, ok := store.Row(gvk.GroupKind())
	require.True(t, ok, "no row for %v", gvk)
	v, err := (&Reviewer{Store: store}).Review(context.Background(), gvk, rules.Request{Operation: rules.Create, Policy: policy.NewPolicy(row, obj)}, !dryRun)
	require.NoError(t, err, "the review finished")
	return v
}

func readyStore(table *kinds.KindTable, snap *index.Snapshot) *Store {
	s := NewStore(table, snap)
	s.SetReady()
	return s
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &obj))
	return obj
}

// The second of two conflicting policies is denied even before any informer event: the
// first was reserved when it was admitted.
func TestStoreReservesAdmittedPolicies(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	require.True(t, judge(t, store, btls("one"), false).Allowed())
	second := judge(t, store, btls("two"), false)
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted, "Service app/b1 section https already has BackendTLSPolicy app/one; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")}, second.Denials)
}

func TestStoreDryRunDoesNotReserve(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	require.True(t, judge(t, store, btls("one"), true).Allowed())
	assert.True(t, judge(t, store, btls("two"), false).Allowed())
}

// Two reviews in flight at once for one conflict key: exactly one is admitted.
func TestStoreConcurrentPair(t *testing.T) {
	for run := 0; run < 50; run++ {
		store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
		var wg sync.WaitGroup
		allowed := make([]bool, 2)
		for i := range allowed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				allowed[i] = judge(t, store, btls(fmt.Sprintf("p%d", i)), false).Allowed()
			}()
		}
		wg.Wait()
		require.NotEqual(t, allowed[0], allowed[1], "run %d: exactly one of the pair is admitted", run)
	}
}

func TestStoreReservationExpires(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	require.True(t, judge(t, store, btls("one"), false).Allowed())

	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 1, store.ExpireReservations(), "never confirmed by the informer: dropped")
	assert.True(t, judge(t, store, btls("two"), false).Allowed())

	// A reservation the informer confirmed stays.
	store.Upsert(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, decodeJSON(t, btls("two")))
	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 0, store.ExpireReservations())
	assert.False(t, judge(t, store, btls("three"), false).Allowed())

	store.Remove(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "two")
	assert.True(t, judge(t, store, btls("four"), false).Allowed())
}

// The periodic audit judges in chunks; its result must not depend on the chunk size.
func TestStoreAuditAcrossChunks(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	store.UseConfig(&rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}})
	tls := schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}
	const services = 3*auditChunk + 7
	svc := schema.GroupKind{Kind: "Service"}
	for i := 0; i < services; i++ {
		store.Upsert(svc, decodeJSON(t, fmt.Sprintf(`{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s%d", "namespace": "app"},
			"spec": {"ports": [{"name": "https", "port": 443}]}}`, i)))
		o := decodeJSON(t, fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": {"name": "p%d", "namespace": "app", "creationTimestamp": "2024-01-01T00:00:%02dZ"},
			"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "s%d", "sectionName": "https"}],
			         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`, i, i%60, i))
		store.Upsert(tls, o)
	}
	// Every 100th service gets a second, younger policy (created while the webhook was down).
	var want []string
	for i := 0; i < services; i += 100 {
		o := decodeJSON(t, fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": {"name": "late%d", "namespace": "app", "creationTimestamp": "2024-02-01T00:00:00Z"},
			"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "s%d", "sectionName": "https"}],
			         "validation": {"hostname": "other", "wellKnownCACertificates": "System"}}}`, i, i))
		store.Upsert(tls, o)
		want = append(want, fmt.Sprintf("app/late%d", i))
	}
	findings, audited := store.Audit()
	assert.Equal(t, services+len(want), audited)
	var got []string
	for _, f := range findings {
		got = append(got, f.Policy.Ref())
		assert.Equal(t, []rules.Mode{rules.Warn}, f.Modes)
	}
	assert.ElementsMatch(t, want, got)

}

// withUID decodes a policy document and sets its metadata.uid, as the API server has by the
// time it calls validating webhooks and sends watch events.
func withUID(t *testing.T, doc, uid string) map[string]any {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(doc), &obj))
	obj["metadata"].(map[string]any)["uid"] = uid
	return obj
}

// A policy a live read proved deleted stays gone when an add or update of that same object
// (same UID) arrives late from the watch; the same name created again (another UID), or the
// watch's own delete, ends the tombstone.
func TestStoreForgottenPolicyIsNotBroughtBackByStaleEvents(t *testing.T) {
	store := NewStore(kinds.BuiltinKindTable(), index.New())
	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-1"))
	stored, ok := store.snap.GetPolicy(btlsKind, "app", "one")
	require.True(t, ok)

	store.Forget(stored)
	assert.False(t, store.Has(btlsKind, "app", "one"))

	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-1"))
	assert.False(t, store.Has(btlsKind, "app", "one"), "a stale event of the deleted object is ignored")

	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-2"))
	assert.True(t, store.Has(btlsKind, "app", "one"), "the name created again is a new object")

	recreated, _ := store.snap.GetPolicy(btlsKind, "app", "one")
	store.Forget(recreated)
	store.Remove(btlsKind, "app", "one")
	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-2"))
	assert.True(t, store.Has(btlsKind, "app", "one"), "after the watch's delete, events are applied again")
}

// A tombstone lasts ReservationTTL: a policy still being deleted (finalizers) that outlives
// it is taken again from its next event, as the watch would report it.
func TestStoreForgottenPoliciesExpire(t *testing.T) {
	store := NewStore(kinds.BuiltinKindTable(), index.New())
	now := time.Now()
	store.now = func() time.Time { return now }
	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-1"))
	stored, _ := store.snap.GetPolicy(btlsKind, "app", "one")
	store.Forget(stored)

	now = now.Add(ReservationTTL - time.Second)
	store.ExpireReservations()
	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-1"))
	assert.False(t, store.Has(btlsKind, "app", "one"), "within the TTL the event is stale")

	now = now.Add(2 * time.Second)
	store.ExpireReservations()
	store.Upsert(btlsKind, withUID(t, btls("one"), "uid-1"))
	assert.True(t, store.Has(btlsKind, "app", "one"), "past the TTL the event is applied")
}

// A conflicting policy that arrives between a review's verdict (reached under the read
// lock) and its reservation is seen: the review is judged again and denied.
func TestStoreJudgesAgainWhenTheStateChangedBeforeReserving(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	store.beforeReserve = func() {
		store.beforeReserve = nil
		store.Upsert(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, decodeJSON(t, btls("one")))
	}
	before := testutil.ToFloat64(judgesAgain)

	second := judge(t, store, btls("two"), false)

	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted, "Service app/b1 section https already has BackendTLSPolicy app/one; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")}, second.Denials)
	assert.Equal(t, before+1, testutil.ToFloat64(judgesAgain))
	assert.False(t, store.Has(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "two"), "a denied review reserves nothing")
}

// When nothing a verdict reads changed between verdict and reservation, the verdict stands
// as reached: the periodic expiry that finds nothing to expire, and a deletion mark, are
// writes that change nothing a verdict reads.
func TestStoreReservesWithoutJudgingAgainWhenNothingChanged(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	store.beforeReserve = func() {
		store.beforeReserve = nil
		assert.Zero(t, store.ExpireReservations())
		store.MarkDeleting(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "elsewhere")
	}
	before := testutil.ToFloat64(judgesAgain)

	require.True(t, judge(t, store, btls("one"), false).Allowed())

	assert.Equal(t, before, testutil.ToFloat64(judgesAgain))
	assert.True(t, store.Has(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "one"))
}

// An expiry that does drop a reservation changes what the verdict read: judged again.
func TestStoreJudgesAgainWhenAReservationExpiredBeforeReserving(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	require.True(t, judge(t, store, btls("old"), false).Allowed())
	store.beforeReserve = func() {
		store.beforeReserve = nil
		clock = clock.Add(ReservationTTL + time.Second)
		assert.Equal(t, 1, store.ExpireReservations())
	}
	before := testutil.ToFloat64(judgesAgain)

	// "other" targets another Service, so it is allowed either way; what is checked is
	// that the expiry counts as a change.
	other := strings.ReplaceAll(btls("other"), `"name": "b1"`, `"name": "b2"`)
	require.True(t, judge(t, store, other, false).Allowed())

	assert.Equal(t, before+1, testutil.ToFloat64(judgesAgain))
}

// Something holds the store (in life: a stuck writer): a review gives up at its deadline
// instead of waiting, and reserves nothing.
func TestReviewGivesUpAtItsDeadline(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	obj := decodeJSON(t, btls("slow"))
	row, _ := store.Row(btlsKind)
	req := rules.Request{Operation: rules.Create, Policy: policy.NewPolicy(row, obj)}
	gvk := btlsKind.WithVersion("v1")

	store.mu.Lock()
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		store.mu.Unlock()
		close(released)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := (&Reviewer{Store: store}).Review(ctx, gvk, req, true)
	<-released
	assert.ErrorIs(t, err, ErrDeadline)
	assert.False(t, store.Has(btlsKind, "app", "slow"), "a review that gave up reserves nothing")
	assert.True(t, judge(t, store, btls("next"), false).Allowed(), "the deadline is per review")
}

// withTopology is rulestest.Topology as a snapshot: the Service b1 the btls policies target
// exists (at a missing target two policies do not conflict yet).
func withTopology(t testing.TB) *index.Snapshot {
	return rulestest.World(t, kinds.BuiltinKindTable(), rulestest.Topology)
}
