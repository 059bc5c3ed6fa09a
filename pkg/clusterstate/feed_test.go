package clusterstate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

var btlsKind = schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"}

func btlsObject(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: withUID(t, btls(name), "uid-"+name)}
}

// listed records what a list returned, as feed.list does before the reflector calls Replace.
func listed(f *feed, names ...string) {
	keys := map[types.NamespacedName]struct{}{}
	for _, n := range names {
		keys[types.NamespacedName{Namespace: "app", Name: n}] = struct{}{}
	}
	f.mu.Lock()
	f.listed = keys
	f.mu.Unlock()
}

// A relist (after a watch expired) retires what was deleted while nothing watched, and
// keeps what is still there; the feed is synced once its first list is in.
func TestFeedRelistRetiresWhatTheListNoLongerHas(t *testing.T) {
	store := NewStore(kinds.BuiltinKindTable(), index.New())
	f := newFeed(btlsKind, store)
	for _, name := range []string{"kept", "deleted-unwatched"} {
		store.Upsert(btlsKind, btlsObject(t, name).Object) // what feed.list stores as it decodes
	}
	listed(f, "kept", "deleted-unwatched")
	require.NoError(t, f.Replace(nil, "1"))
	assert.True(t, f.synced.Load())
	assert.True(t, store.Has(btlsKind, "app", "kept"))
	assert.True(t, store.Has(btlsKind, "app", "deleted-unwatched"))

	require.NoError(t, f.Add(btlsObject(t, "added-by-watch")))
	listed(f, "kept", "added-by-watch")
	require.NoError(t, f.Replace(nil, "2"))
	assert.True(t, store.Has(btlsKind, "app", "kept"))
	assert.True(t, store.Has(btlsKind, "app", "added-by-watch"))
	assert.False(t, store.Has(btlsKind, "app", "deleted-unwatched"), "gone from the relist, so gone from the store")
}

// Items the reflector passes to Replace itself (a watch-list stream) are stored and count
// as listed.
func TestFeedReplaceStoresItemsItIsGiven(t *testing.T) {
	store := NewStore(kinds.BuiltinKindTable(), index.New())
	f := newFeed(btlsKind, store)
	require.NoError(t, f.Replace([]any{btlsObject(t, "streamed")}, "1"))
	assert.True(t, store.Has(btlsKind, "app", "streamed"))
	require.NoError(t, f.Replace(nil, "2"))
	assert.False(t, store.Has(btlsKind, "app", "streamed"), "a later list without it retires it")
}

// Watch deletes remove the object, also when the reflector only knows its last state.
func TestFeedDelete(t *testing.T) {
	store := NewStore(kinds.BuiltinKindTable(), index.New())
	f := newFeed(btlsKind, store)
	require.NoError(t, f.Add(btlsObject(t, "one")))
	require.NoError(t, f.Update(btlsObject(t, "two")))
	require.True(t, store.Has(btlsKind, "app", "one"), "an add is stored")
	require.True(t, store.Has(btlsKind, "app", "two"), "an update is stored")

	require.NoError(t, f.Delete(btlsObject(t, "one")))
	assert.False(t, store.Has(btlsKind, "app", "one"))
	assert.True(t, store.Has(btlsKind, "app", "two"), "a delete removes its object only")
	assert.Equal(t, map[types.NamespacedName]struct{}{{Namespace: "app", Name: "two"}: {}}, f.keys)

	require.NoError(t, f.Delete(toolscache.DeletedFinalStateUnknown{Key: "app/two", Obj: btlsObject(t, "two")}))
	assert.False(t, store.Has(btlsKind, "app", "two"), "a delete the watch missed the end of still removes")
	assert.Empty(t, f.keys)
}

// A kind known only from its CRD's label that the webhook may not list does not hold
// readiness; a kind of the table does, until it is listed.
func TestSyncedWaitsForRequiredFeedsOnly(t *testing.T) {
	required, optional := newFeed(schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}, nil),
		newFeed(schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}, nil)
	optional.optional = true
	s := &Feeds{feeds: []*feed{required, optional}}
	assert.False(t, s.Synced(), "nothing listed yet")

	optional.forbidden.Store(true)
	assert.False(t, s.Synced(), "the required kind is not listed yet")
	required.synced.Store(true)
	assert.True(t, s.Synced(), "a forbidden discovered kind does not hold readiness")

	required.synced.Store(false)
	required.forbidden.Store(true)
	assert.False(t, s.Synced(), "a forbidden kind of the table holds readiness")
}
