package clusterstate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"
)

// A feed keeps the Store in step with one kind, without an informer cache: client-go's
// reflector lists and watches, and every object goes straight into the Store, parsed once
// into what the rules read; the feed itself keeps only keys. An informer would also keep
// each object as generic JSON (about 10 KB for a route with ten rules), which on a large
// cluster was most of the webhook's memory (BENCHMARKS.md: 326 MiB after sync, 652 MiB
// peak, against 70 MiB for the Store alone).
//
// The list is read in pages and each page is stored as it arrives, so that at most one
// page of generic JSON is alive at a time: the reflector's own list, or its watch-list
// stream, would hand over the whole kind at once.
type feed struct {
	gk    schema.GroupKind
	store *Store

	mu sync.Mutex
	// keys are the objects the Store holds from this feed.
	keys map[types.NamespacedName]struct{}
	// listed are the objects the list under way (or just finished) returned; Replace
	// retires the keys it lacks.
	listed map[types.NamespacedName]struct{}
	synced atomic.Bool
	// forbidden is set when the API server refused to list the kind to the webhook's
	// identity; onForbidden, when set, is told once.
	forbidden   atomic.Bool
	onForbidden func(error)
	// optional: the kind is known only from its CRD's label (Feeds.Synced).
	optional bool
	// listStart is when the first list began; onListed, when set, is told once how many
	// objects it stored and how long it took (the start-up log names each kind's time).
	listStart time.Time
	onListed  func(objects int, took time.Duration)
}

var _ toolscache.ReflectorStore = (*feed)(nil)

func newFeed(gk schema.GroupKind, store *Store) *feed {
	return &feed{gk: gk, store: store, keys: map[types.NamespacedName]struct{}{}}
}

// listPages lists the kind page by page at the latest resource version and stores each
// object as it comes. It returns an empty list carrying the resource version the watch
// resumes from; the reflector then calls Replace.
func (f *feed) listPages(ctx context.Context, resource dynamic.ResourceInterface, opts metav1.ListOptions) (runtime.Object, error) {
	// Not the reflector's resourceVersion "0": the API server's watch cache ignores limit
	// there and answers with the whole kind in one response. "" is the latest, which is
	// always correct for a relist too (at least as fresh as asked).
	opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	opts.Limit = ListPageSize
	opts.Continue = ""
	listed := map[types.NamespacedName]struct{}{}
	out := &unstructured.UnstructuredList{}
	if f.listStart.IsZero() {
		f.listStart = time.Now()
	}
	for {
		page, err := resource.List(ctx, opts)
		if err != nil {
			if apierrors.IsForbidden(err) && !f.forbidden.Swap(true) && f.onForbidden != nil {
				f.onForbidden(err)
			}
			return nil, err
		}
		f.forbidden.Store(false)
		for i := range page.Items {
			item := &page.Items[i]
			listed[types.NamespacedName{Namespace: item.GetNamespace(), Name: item.GetName()}] = struct{}{}
			f.store.Upsert(f.gk, item.Object)
		}
		out.SetResourceVersion(page.GetResourceVersion())
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			break
		}
	}
	f.mu.Lock()
	f.listed = listed
	f.mu.Unlock()
	return out, nil
}

// Replace ends a list: objects the Store holds from this feed that the list no longer
// returned were deleted while nothing watched, and leave the Store.
func (f *feed) Replace(items []any, _ string) error {
	f.mu.Lock()
	listed := f.listed
	f.listed = nil
	f.mu.Unlock()
	if listed == nil {
		listed = map[types.NamespacedName]struct{}{}
	}
	// listPages returns no items; any the reflector passes (a watch-list stream, should it
	// ever be used) are stored here.
	for _, obj := range items {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			listed[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = struct{}{}
			f.store.Upsert(f.gk, u.Object)
		}
	}
	f.mu.Lock()
	var gone []types.NamespacedName
	for key := range f.keys {
		if _, ok := listed[key]; !ok {
			gone = append(gone, key)
		}
	}
	f.keys = listed
	f.mu.Unlock()
	for _, key := range gone {
		f.store.Remove(f.gk, key.Namespace, key.Name)
	}
	if !f.synced.Swap(true) && f.onListed != nil {
		f.onListed(len(listed), time.Since(f.listStart))
	}
	return nil
}

// Add, Update and Delete apply watch events.
func (f *feed) Add(obj any) error    { return f.upsert(obj) }
func (f *feed) Update(obj any) error { return f.upsert(obj) }
func (f *feed) Resync() error        { return nil }

func (f *feed) Delete(obj any) error {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	f.mu.Lock()
	delete(f.keys, key)
	f.mu.Unlock()
	f.store.Remove(f.gk, key.Namespace, key.Name)
	return nil
}

func (f *feed) upsert(obj any) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	f.mu.Lock()
	f.keys[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = struct{}{}
	f.mu.Unlock()
	f.store.Upsert(f.gk, u.Object)
	return nil
}

// feedLister is the reflector's ListerWatcher for a feed.
type feedLister struct {
	feed     *feed
	resource dynamic.ResourceInterface
}

func (l *feedLister) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.feed.listPages(ctx, l.resource, opts)
}

func (l *feedLister) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return l.resource.Watch(ctx, opts)
}

// List and Watch complete the older ListerWatcher interface NewReflectorWithOptions takes;
// the reflector calls the context forms above.
func (l *feedLister) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *feedLister) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported keeps the reflector on list-then-watch: a watch-list
// stream is collected whole before the reflector hands it over, which is what the paged
// list avoids.
func (l *feedLister) IsWatchListSemanticsUnSupported() bool { return true }

// startFeed runs a reflector for one kind until ctx ends.
func startFeed(ctx context.Context, dyn dynamic.Interface, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, f *feed) {
	expected := &unstructured.Unstructured{}
	expected.SetGroupVersionKind(gvk)
	lw := &feedLister{feed: f, resource: dyn.Resource(gvr)}
	r := toolscache.NewReflectorWithOptions(lw, expected, f, toolscache.ReflectorOptions{Name: "policyattachment " + gvk.Kind})
	go r.RunWithContext(ctx)
}
