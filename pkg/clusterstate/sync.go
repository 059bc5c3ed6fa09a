package clusterstate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Feeds keeps a Store in step with the cluster: a feed (feed.go) for every kind the rules
// read that the API server serves (the non-policy kinds, the table's policy kinds, and CRDs
// labelled as policies, including those installed while running).
type Feeds struct {
	store *Store
	mgr   manager.Manager
	dyn   dynamic.Interface
	raw   rest.Interface
	table *kinds.KindTable
	log   logr.Logger

	mu      sync.Mutex // guards watched, feeds and derivedAt: CRD events start feeds from their own goroutines
	watched map[schema.GroupKind]bool
	feeds   []*feed
	// derivedAt is the metadata.generation of the installed CRD each built-in kind's row
	// was derived from (crd_drift.go).
	derivedAt map[schema.GroupKind]int64
	// targetless are the labelled CRDs, by name, said in the log to be no policy kind to
	// judge (kinds.CRDRow.Targetless): each is said once, not at every event of the CRD.
	targetless map[string]bool
}

// NewFeeds prepares the feeds of store; mgr supplies the API reader, the REST mapper and the
// CRD informer (its cache should use TrimForRules), raw lists (a REST client of any group,
// decoding errors as Status: rest.UnversionedRESTClientFor) and dyn watches.
func NewFeeds(store *Store, mgr manager.Manager, dyn dynamic.Interface, raw rest.Interface, table *kinds.KindTable, log logr.Logger) *Feeds {
	return &Feeds{store: store, mgr: mgr, dyn: dyn, raw: raw, table: table, log: log, watched: map[schema.GroupKind]bool{}, derivedAt: map[schema.GroupKind]int64{}, targetless: map[string]bool{}}
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// TrimForRules is the transform of the one informer cache left, the CRDs' (every other
// kind is fed straight into the Store, see feed.go): it drops what discovery does not read,
// managed fields, status, annotations, and each version's OpenAPI schema but the few fields
// discovery reads (kinds.SchemaForDiscovery), which is most of a CRD (hundreds of KB for
// some gateway implementations' policy CRDs).
func TrimForRules(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return cache.TransformStripManagedFields()(obj)
	}
	u.SetManagedFields(nil)
	u.SetAnnotations(nil)
	delete(u.Object, "status")
	// In place: unstructured.NestedSlice would deep-copy the schemas before they are dropped.
	spec, _ := u.Object["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			schema, _ := m["schema"].(map[string]any)
			if kept := kinds.SchemaForDiscovery(schema); kept != nil {
				m["schema"] = kept
			} else {
				delete(m, "schema")
			}
		}
	}
	return u, nil
}

// Start starts a feed for every kind the rules read that the API server serves:
// the non-policy kinds, the table's policy kinds, and CRDs labelled as policies.
func (s *Feeds) Start(ctx context.Context) error {
	// Built-in kinds are judged by their installed CRDs' rows before any policy is listed.
	for _, row := range s.table.Rows() {
		s.useInstalledCRD(ctx, row.GroupKind())
	}
	reader := s.mgr.GetAPIReader()
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(crdGVK)
	if err := reader.List(ctx, crds, client.HasLabels{kinds.PolicyLabel}); err != nil {
		return fmt.Errorf("listing policy CRDs: %w", err)
	}
	for i := range crds.Items {
		s.addCRD(&crds.Items[i])
	}
	gks := kinds.ReadKinds()
	for _, row := range s.table.Rows() {
		gks = append(gks, row.GroupKind())
	}
	for _, gk := range gks {
		mapping, err := s.mgr.GetRESTMapper().RESTMapping(gk)
		if err != nil {
			continue // not served by this cluster
		}
		if err := s.watch(ctx, mapping.GroupVersionKind); err != nil {
			return err
		}
	}
	// Policy CRDs installed while running get a row and a feed, outside any request.
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	inf, err := s.mgr.GetCache().GetInformer(ctx, crd, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching CRDs: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onCRD(ctx, obj, false) },
		UpdateFunc: func(_, obj any) { s.onCRD(ctx, obj, false) },
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			s.onCRD(ctx, obj, true)
		},
	})
	return err
}

func (s *Feeds) onCRD(ctx context.Context, obj any, deleted bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if gk, changed := s.crdChanged(u, deleted); changed {
		// A release of a built-in kind's implementation installed, upgraded or removed while
		// running: its row is derived again from the CRD as the API server has it now.
		go s.useInstalledCRD(ctx, gk)
		return
	}
	if deleted {
		return
	}
	gvk, ok := s.addCRD(u)
	if !ok {
		return
	}
	go func() {
		if err := s.watch(ctx, gvk); err != nil {
			s.log.Error(err, "watching discovered policy kind", "kind", gvk.String())
		}
	}()
}

// addCRD adds the discovered row of a labelled CRD and returns its served version. A
// labelled CRD whose objects cannot name a target gets no row, no feed and no verdicts: it
// is said once in the log instead, as labelled but targetless.
func (s *Feeds) addCRD(u *unstructured.Unstructured) (schema.GroupVersionKind, bool) {
	found, labelled, err := kinds.RowFromCRD(u.Object)
	if !labelled {
		return schema.GroupVersionKind{}, false
	}
	if err == nil && found.Targetless {
		s.logTargetless(u.GetName())
		return schema.GroupVersionKind{}, false
	}
	if err == nil {
		err = s.store.AddRow(found.Row)
	}
	if err != nil {
		s.log.Error(err, "discovered policy kind has an unusable row", "crd", u.GetName())
		return schema.GroupVersionKind{}, false
	}
	gvk := schema.GroupVersionKind{Group: found.Row.Group, Version: found.StoredVersion, Kind: found.Row.Kind}
	return gvk, gvk.Version != ""
}

// logTargetless says once that a CRD labelled as a policy kind is not judged: no object of
// it can name a target, so it attaches to nothing, and judging it by the label alone would
// deny every one of them for naming none.
func (s *Feeds) logTargetless(name string) {
	s.mu.Lock()
	said := s.targetless[name]
	s.targetless[name] = true
	s.mu.Unlock()
	if !said {
		s.log.Info("CRD labelled "+kinds.PolicyLabel+" has no target field (targetRef, targetRefs, targetSelectors) in its schema: its objects attach to nothing and are not judged", "crd", name)
	}
}

// watch starts the feed of one kind into the store.
func (s *Feeds) watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	s.mu.Lock()
	already := s.watched[gvk.GroupKind()]
	s.watched[gvk.GroupKind()] = true
	s.mu.Unlock()
	if already {
		return nil
	}
	mapping, err := s.mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("resource for %s: %w", gvk, err)
	}
	f := newFeed(gvk.GroupKind(), s.store)
	f.optional = s.discovered(gvk.GroupKind())
	f.onForbidden = func(err error) {
		// One line that says what to grant; the reflector retries, and the feed counts
		// once the grant is there.
		msg := "the webhook may not list this kind: grant its ServiceAccount get, list and watch on it; until then readiness stays false"
		if f.optional {
			msg = "the webhook may not list this kind, known only from its CRD's policy label: its policies are judged without the stored ones until a ClusterRole labelled rbac.policyattachment.io/aggregate-to-webhook=true grants get, list and watch on it"
		}
		s.log.Error(err, msg, "group", mapping.Resource.Group, "resource", mapping.Resource.Resource)
	}
	f.onListed = func(objects int, took time.Duration) {
		s.log.Info("listed", "group", gvk.Group, "kind", gvk.Kind, "objects", objects, "took", took.Round(time.Millisecond).String())
	}
	s.mu.Lock()
	s.feeds = append(s.feeds, f)
	s.mu.Unlock()
	startFeed(ctx, s.dyn, s.raw, gvk, mapping.Resource, f)
	return nil
}

// Synced reports whether every feed has listed its kind once, a kind known only from
// its CRD's label aside while the webhook may not list it: a labelled CRD installed
// without a grant for the webhook must not take validation down for every other kind.
func (s *Feeds) Synced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.feeds {
		if !f.synced.Load() && !(f.optional && f.forbidden.Load()) {
			return false
		}
	}
	return true
}

// discovered reports whether the store knows a policy kind only from its CRD's label.
func (s *Feeds) discovered(gk schema.GroupKind) bool {
	row, ok := s.store.Row(gk)
	return ok && row.Source == kinds.SourceDiscovered
}
