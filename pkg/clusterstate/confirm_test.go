package clusterstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// lookupOf answers as an API server that stores the given objects (namespace/name → JSON);
// asked records each question.
func lookupOf(t *testing.T, stored map[string]string, asked *[]string) Lookup {
	return func(_ context.Context, _ schema.GroupKind, namespace, name string) (map[string]any, bool, error) {
		*asked = append(*asked, namespace+"/"+name)
		doc, ok := stored[namespace+"/"+name]
		if !ok {
			return nil, false, nil
		}
		return decodeJSON(t, doc), true, nil
	}
}

// A review the API server never stored (forged straight to the pod) reserves its policy and
// holds its claims for the confirmation window only: then the API server is asked, the
// reservation dropped and the claims given back as not admitted, and the next policy at
// the target is admitted.
func TestConfirmDropsWhatTheAPIServerNeverStored(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	require.True(t, judge(t, store, btls("ghost"), false).Allowed())
	released := make(chan bool, 1)
	row, _ := store.Row(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"})
	store.Hold(policy.NewPolicy(row, decodeJSON(t, btls("ghost"))), func(admitted bool) { released <- admitted })
	var asked []string
	lookup := lookupOf(t, nil, &asked)

	clock = clock.Add(DefaultConfirmWindow / 2)
	assert.Equal(t, 0, store.ConfirmReservations(context.Background(), DefaultConfirmWindow, lookup))
	assert.Empty(t, asked, "inside the window the API server is not asked")
	assert.False(t, judge(t, store, btls("real"), false).Allowed(), "inside the window the reservation holds")

	clock = clock.Add(DefaultConfirmWindow)
	assert.Equal(t, 1, store.ConfirmReservations(context.Background(), DefaultConfirmWindow, lookup))
	assert.Equal(t, []string{"app/ghost"}, asked)
	assert.False(t, <-released, "its claims are given back as not admitted")
	assert.True(t, judge(t, store, btls("real"), false).Allowed(), "the target is free again")
}

// A policy the API server did store, whose watch event is late, takes the stored object's
// place and its claims are released as admitted; one the API server could not be asked
// about stays reserved and is asked again.
func TestConfirmKeepsWhatTheAPIServerStored(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	require.True(t, judge(t, store, btls("one"), false).Allowed())
	released := make(chan bool, 1)
	row, _ := store.Row(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"})
	store.Hold(policy.NewPolicy(row, decodeJSON(t, btls("one"))), func(admitted bool) { released <- admitted })
	clock = clock.Add(2 * DefaultConfirmWindow)

	failing := func(context.Context, schema.GroupKind, string, string) (map[string]any, bool, error) {
		return nil, false, errors.New("the API server did not answer")
	}
	assert.Equal(t, 0, store.ConfirmReservations(context.Background(), DefaultConfirmWindow, failing))
	assert.False(t, judge(t, store, btls("two"), false).Allowed(), "not dropped on a failed read")

	var asked []string
	assert.Equal(t, 0, store.ConfirmReservations(context.Background(), DefaultConfirmWindow, lookupOf(t, map[string]string{"app/one": btls("one")}, &asked)))
	assert.Equal(t, []string{"app/one"}, asked)
	assert.True(t, <-released, "released as admitted: the next review at its keys reads it")
	asked = nil
	clock = clock.Add(2 * DefaultConfirmWindow)
	assert.Equal(t, 0, store.ConfirmReservations(context.Background(), DefaultConfirmWindow, lookupOf(t, nil, &asked)))
	assert.Empty(t, asked, "confirmed: never asked again")
	assert.False(t, judge(t, store, btls("three"), false).Allowed(), "it stays")
}

// TestClaimedPolicyStored asks the API server for the policy a claim names, its kind read
// from the claim's key as ClaimKeys writes it; a kind no longer served, or a key of no kind,
// has nothing stored, and a failed read is the sweep's to retry.
func TestClaimedPolicyStored(t *testing.T) {
	type answer struct {
		stored bool
		err    string
	}
	stored := map[string]bool{"gateway.networking.k8s.io/BackendTLSPolicy app/kept": true}
	lookup := func(_ context.Context, gk schema.GroupKind, namespace, name string) (map[string]any, bool, error) {
		switch name {
		case "gone-kind":
			return nil, false, &meta.NoKindMatchError{GroupKind: gk}
		case "unreadable":
			return nil, false, errors.New("etcdserver: request timed out")
		}
		return nil, stored[gk.Group+"/"+gk.Kind+" "+namespace+"/"+name], nil
	}
	ask := ClaimedPolicyStored(lookup)
	for name, tc := range map[string]struct {
		key, holder string
		want        answer
	}{
		"stored":                  {"gateway.networking.k8s.io/BackendTLSPolicy /Service/app/svc", "app/kept", answer{stored: true}},
		"not stored":              {"gateway.networking.k8s.io/BackendTLSPolicy /Service/app/svc", "app/forged", answer{}},
		"a kind no longer served": {"gateway.networking.k8s.io/BackendTLSPolicy /Service/app/svc", "app/gone-kind", answer{}},
		"a key of no kind":        {"nonsense", "app/kept", answer{}},
		"unreadable": {"gateway.networking.k8s.io/BackendTLSPolicy /Service/app/svc", "app/unreadable",
			answer{err: "etcdserver: request timed out"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ask(context.Background(), tc.key, tc.holder)
			a := answer{stored: got}
			if err != nil {
				a.err = err.Error()
			}
			assert.Equal(t, tc.want, a)
		})
	}
}

// A review that names a stored policy but not as it is stored (forged straight to a pod, with
// other targets) does not admit its claims, whether the watch reports the stored policy or
// the API server is asked: they are given back as never admitted, and leave no Lease behind.
// The same spec, decoded from a watch event (integers as int64) rather than a review, does.
func TestClaimsAreAdmittedOnlyForThePolicyAsJudged(t *testing.T) {
	const otherTarget = `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": "one", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "forged-b9"}],
		         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`
	row, _ := kinds.BuiltinKindTable().Lookup(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"})
	for name, tc := range map[string]struct {
		judged   string
		confirm  func(t *testing.T, store *Store)
		admitted bool
	}{
		"the watch reports the policy as judged": {
			judged:   btls("one"),
			confirm:  func(t *testing.T, store *Store) { store.Upsert(btlsKind, withUID(t, btls("one"), "uid-one")) },
			admitted: true,
		},
		"the watch reports it with other targets": {
			judged:  otherTarget,
			confirm: func(t *testing.T, store *Store) { store.Upsert(btlsKind, withUID(t, btls("one"), "uid-one")) },
		},
		"the API server stores it with other targets": {
			judged: otherTarget,
			confirm: func(t *testing.T, store *Store) {
				var asked []string
				store.now = func() time.Time { return time.Unix(0, 0).Add(2 * DefaultConfirmWindow) }
				store.ConfirmReservations(context.Background(), DefaultConfirmWindow, lookupOf(t, map[string]string{"app/one": btls("one")}, &asked))
				assert.Equal(t, []string{"app/one"}, asked)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
			store.now = func() time.Time { return time.Unix(0, 0) }
			require.True(t, judge(t, store, tc.judged, false).Allowed())
			released := make(chan bool, 1)
			store.Hold(policy.NewPolicy(row, decodeJSON(t, tc.judged)), func(admitted bool) { released <- admitted })
			tc.confirm(t, store)
			assert.Equal(t, tc.admitted, <-released)
		})
	}
}
