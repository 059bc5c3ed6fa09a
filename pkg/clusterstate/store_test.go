package clusterstate

import (
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"

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
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules"
)

func btls(name string) string {
	return fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %q, "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}],
		         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`, name)
}

// The second of two conflicting policies is denied even before any informer event: the
// first was reserved when it was admitted.
func TestStoreReservesAdmittedPolicies(t *testing.T) {
	v := validator(index.New())
	first := v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("one")))
	require.True(t, first.Allowed)
	second := v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("two")))
	require.False(t, second.Allowed)
	assert.Equal(t, `BackendTLSPolicy.gateway.networking.k8s.io "two" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service app/b1 section https already has BackendTLSPolicy app/one; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, second.Result.Message)
}

func TestStoreDryRunDoesNotReserve(t *testing.T) {
	v := validator(index.New())
	req := review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("one"))
	dry := true
	req.DryRun = &dry
	require.True(t, v.Handle(context.Background(), req).Allowed)
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("two"))).Allowed)
}

// Two reviews in flight at once for one conflict key: exactly one is admitted.
func TestStoreConcurrentPair(t *testing.T) {
	for run := 0; run < 50; run++ {
		v := validator(index.New())
		var wg sync.WaitGroup
		allowed := make([]bool, 2)
		for i := range allowed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				allowed[i] = v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls(fmt.Sprintf("p%d", i)))).Allowed
			}()
		}
		wg.Wait()
		require.NotEqual(t, allowed[0], allowed[1], "run %d: exactly one of the pair is admitted", run)
	}
}

func TestStoreReservationExpires(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	v := &Validator{Store: store}
	require.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("one"))).Allowed)

	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 1, store.ExpireReservations(), "never confirmed by the informer: dropped")
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("two"))).Allowed)

	// A reservation the informer confirmed stays.
	store.Upsert(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, decodeJSON(t, btls("two")))
	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 0, store.ExpireReservations())
	assert.False(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("three"))).Allowed)

	store.Remove(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "two")
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("four"))).Allowed)
}

// The periodic audit judges in chunks; its result must not depend on the chunk size.
func TestStoreAuditAcrossChunks(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	store.UseSettings(&rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}})
	tls := schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}
	const services = 3*auditChunk + 7
	for i := 0; i < services; i++ {
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

	publishAudit(findings, audited, time.Millisecond)
	assert.Equal(t, float64(len(want)), testutil.ToFloat64(auditFindings.WithLabelValues("BackendTLSPolicy", validation.ReasonConflicted, "Warn")))
	assert.Equal(t, float64(audited), testutil.ToFloat64(auditPolicies))
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
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	v := &Validator{Store: store}
	store.beforeReserve = func() {
		store.beforeReserve = nil
		store.Upsert(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, decodeJSON(t, btls("one")))
	}
	before := testutil.ToFloat64(judgesAgain)

	second := v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("two")))

	require.False(t, second.Allowed)
	assert.Equal(t, `BackendTLSPolicy.gateway.networking.k8s.io "two" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service app/b1 section https already has BackendTLSPolicy app/one; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, second.Result.Message)
	assert.Equal(t, before+1, testutil.ToFloat64(judgesAgain))
	assert.False(t, store.Has(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "two"), "a denied review reserves nothing")
}

// When nothing a verdict reads changed between verdict and reservation, the verdict stands
// as reached: the periodic expiry that finds nothing to expire, and a deletion mark, are
// writes that change nothing a verdict reads.
func TestStoreReservesWithoutJudgingAgainWhenNothingChanged(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	v := &Validator{Store: store}
	store.beforeReserve = func() {
		store.beforeReserve = nil
		assert.Zero(t, store.ExpireReservations())
		store.MarkDeleting(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "elsewhere")
	}
	before := testutil.ToFloat64(judgesAgain)

	require.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("one"))).Allowed)

	assert.Equal(t, before, testutil.ToFloat64(judgesAgain))
	assert.True(t, store.Has(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "one"))
}

// An expiry that does drop a reservation changes what the verdict read: judged again.
func TestStoreJudgesAgainWhenAReservationExpiredBeforeReserving(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	v := &Validator{Store: store}
	require.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", btls("old"))).Allowed)
	store.beforeReserve = func() {
		store.beforeReserve = nil
		clock = clock.Add(ReservationTTL + time.Second)
		assert.Equal(t, 1, store.ExpireReservations())
	}
	before := testutil.ToFloat64(judgesAgain)

	// "other" targets another Service, so it is allowed either way; what is checked is
	// that the expiry counts as a change.
	other := strings.ReplaceAll(btls("other"), `"name": "b1"`, `"name": "b2"`)
	require.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, kinds.GatewayGroup, "BackendTLSPolicy", other)).Allowed)

	assert.Equal(t, before+1, testutil.ToFloat64(judgesAgain))
}
