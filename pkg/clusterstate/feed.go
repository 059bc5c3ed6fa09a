package clusterstate

import (
	"context"
	"fmt"
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
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// A feed keeps the Store in step with one kind, without an informer cache: client-go's
// reflector lists and watches, and every object goes straight into the Store, parsed once
// into what the rules read; the feed itself keeps only keys. An informer would also keep
// each object as generic JSON (about 10 KB for a route with ten rules), which on a large
// cluster was most of the webhook's memory (BENCHMARKS.md: 326 MiB after sync, 652 MiB
// peak, against 70 MiB for the Store alone).
//
// The list is decoded from the response as it streams in and each object stored as it
// comes, so that at most one object of generic JSON is alive at a time: the reflector's own
// list, or its watch-list stream, would hand over the whole kind at once.
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

// list reads the whole kind in one response, as an informer's first list does (the API
// server answers resourceVersion "0" from its watch cache, without a read from etcd; a
// relist asks for what is at least as fresh as the reflector last saw), and stores each
// object as it is decoded from the stream: at most one object of generic JSON is alive at
// a time, never the whole kind. Paged consistent reads took the API server about twice as
// long (BENCHMARKS.md, "Ten times the cluster": 100,000 routes in 200 pages of 500, 0.25 s
// each, ready after 58 s against 21-34 s). It returns an empty list carrying the resource version the watch
// resumes from; the reflector then calls Replace.
func (f *feed) list(ctx context.Context, c rest.Interface, gvr schema.GroupVersionResource, opts metav1.ListOptions) (runtime.Object, error) {
	if f.listStart.IsZero() {
		f.listStart = time.Now()
	}
	req := c.Get().AbsPath(resourcePath(gvr)).SetHeader("Accept", "application/json")
	switch rv := opts.ResourceVersion; rv {
	case "":
		// The reflector's relist after its resource version expired: the latest.
	case "0":
		req = req.Param("resourceVersion", rv)
	default:
		req = req.Param("resourceVersion", rv).Param("resourceVersionMatch", string(metav1.ResourceVersionMatchNotOlderThan))
	}
	body, err := req.Stream(ctx)
	if err != nil {
		if apierrors.IsForbidden(err) && !f.forbidden.Swap(true) && f.onForbidden != nil {
			f.onForbidden(err)
		}
		return nil, err
	}
	defer body.Close()
	f.forbidden.Store(false)
	listed := map[types.NamespacedName]struct{}{}
	apiVersion := gvr.GroupVersion().String()
	rv, err := eachListItem(body, func(obj map[string]any) error {
		// A typed list's items carry no kind; the Store reads them by the feed's.
		if _, ok := obj["kind"]; !ok {
			obj["apiVersion"], obj["kind"] = apiVersion, f.gk.Kind
		}
		meta, _ := obj["metadata"].(map[string]any)
		namespace, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		listed[types.NamespacedName{Namespace: namespace, Name: name}] = struct{}{}
		f.store.Upsert(f.gk, obj)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the list of %s: %w", gvr.GroupResource(), err)
	}
	f.mu.Lock()
	f.listed = listed
	f.mu.Unlock()
	out := &unstructured.UnstructuredList{}
	out.SetResourceVersion(rv)
	return out, nil
}

// resourcePath is the URL path of a resource's collection across namespaces.
func resourcePath(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return "/api/" + gvr.Version + "/" + gvr.Resource
	}
	return "/apis/" + gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
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
	// list returns no items; any the reflector passes (a watch-list stream, should it
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
	raw      rest.Interface
	gvr      schema.GroupVersionResource
	resource dynamic.ResourceInterface
}

func (l *feedLister) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.feed.list(ctx, l.raw, l.gvr, opts)
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
func startFeed(ctx context.Context, dyn dynamic.Interface, raw rest.Interface, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, f *feed) {
	expected := &unstructured.Unstructured{}
	expected.SetGroupVersionKind(gvk)
	lw := &feedLister{feed: f, raw: raw, gvr: gvr, resource: dyn.Resource(gvr)}
	r := toolscache.NewReflectorWithOptions(lw, expected, f, toolscache.ReflectorOptions{Name: "policyattachment " + gvk.Kind})
	go r.RunWithContext(ctx)
}
