package admission

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/rules"
)

// Paths served on the HTTPS port.
const (
	PathValidate = "/validate"
	PathMutate   = "/mutate"
	PathHealthz  = "/healthz"
	PathReadyz   = "/readyz"
	PathMetrics  = "/metrics"
)

// Options configure `webhook serve`.
type Options struct {
	Host    string
	Port    int
	CertDir string
	// TLSMinVersion is tls.VersionTLS12 or tls.VersionTLS13 (the default).
	TLSMinVersion uint16
	// EnableHTTP2 is off by default (CVE-2023-44487, HTTP/2 rapid reset).
	EnableHTTP2 bool
	// NoLiveReads judges on the cache alone (one replica only; see Validator.Live).
	NoLiveReads bool
	// ReviewTimeout is the per-review deadline (DefaultReviewTimeout when zero).
	ReviewTimeout time.Duration
	// AuditInterval is how often the stored policies are audited (0: never).
	AuditInterval time.Duration
	Table         *rules.KindTable
	// Settings are the config file's enforcement modes and message settings (nil: defaults).
	Settings *rules.Settings
	Log      logr.Logger
}

// nonPolicyKinds are the objects the rules read besides policies.
var nonPolicyKinds = []schema.GroupKind{
	{Group: rules.GatewayGroup, Kind: "Gateway"},
	{Group: rules.GatewayGroup, Kind: "ListenerSet"},
	{Group: rules.GatewayGroup, Kind: "HTTPRoute"},
	{Group: rules.GatewayGroup, Kind: "GRPCRoute"},
	{Group: rules.GatewayGroup, Kind: "TLSRoute"},
	{Group: rules.GatewayGroup, Kind: "TCPRoute"},
	{Group: rules.GatewayGroup, Kind: "UDPRoute"},
	{Group: rules.GatewayGroup, Kind: "ReferenceGrant"},
	{Group: rules.CoreGroup, Kind: "Service"},
	{Group: rules.CoreGroup, Kind: "Namespace"},
	{Group: rules.MultiCluster, Kind: "ServiceImport"},
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Server is a running `webhook serve`.
type Server struct {
	opts    Options
	store   *Store
	mgr     manager.Manager
	dyn     dynamic.Interface
	mu      sync.Mutex // guards watched and feeds: CRD events start feeds from their own goroutines
	watched map[schema.GroupKind]bool
	feeds   []*feed
}

// NewServer builds the manager, the HTTPS server and the store.
func NewServer(cfg *rest.Config, opts Options) (*Server, error) {
	if opts.TLSMinVersion == 0 {
		opts.TLSMinVersion = tls.VersionTLS13
	}
	tlsOpts := []func(*tls.Config){func(c *tls.Config) {
		c.MinVersion = opts.TLSMinVersion
		if !opts.EnableHTTP2 {
			c.NextProtos = []string{"http/1.1"}
		}
	}}
	hooks := webhook.NewServer(webhook.Options{Host: opts.Host, Port: opts.Port, CertDir: opts.CertDir, TLSOpts: tlsOpts})
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 runtime.NewScheme(),
		Cache:                  cache.Options{DefaultTransform: trimForRules},
		Metrics:                metricsserver.Options{BindAddress: "0"}, // served on the HTTPS port instead
		HealthProbeBindAddress: "0",
		WebhookServer:          hooks,
		Logger:                 opts.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the client the feeds list and watch with: %w", err)
	}
	s := &Server{opts: opts, store: NewStore(opts.Table, rules.NewMemorySnapshot()), mgr: mgr, dyn: dyn, watched: map[schema.GroupKind]bool{}}
	s.store.UseSettings(opts.Settings)
	// GetWebhookServer (not the local variable) is what adds the server to the manager.
	hooks = mgr.GetWebhookServer()
	hooks.Register(PathValidate, reviewHandler("validate", s.validator()))
	hooks.Register(PathMutate, reviewHandler("mutate", &Mutator{Store: s.store}))
	hooks.Register(PathHealthz, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	hooks.Register(PathReadyz, readyz(s.store))
	hooks.Register(PathMetrics, promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	return s, nil
}

func (s *Server) validator() *Validator {
	v := &Validator{Store: s.store, Timeout: s.opts.ReviewTimeout}
	if !s.opts.NoLiveReads {
		v.Live = s.mgr.GetAPIReader()
	}
	return v
}

// readyz answers 200 only once every kind the rules read has been listed: before that, a
// review would be judged against a partial view of the cluster.
func readyz(store *Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !store.Ready() {
			http.Error(w, "not every kind the rules read has been listed yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
}

// trimForRules is the transform of the one informer cache left, the CRDs' (every other
// kind is fed straight into the Store, see feed.go): it drops what discovery does not read,
// managed fields, status, annotations, and each version's OpenAPI schema, which is most of
// a CRD (hundreds of KB for some gateway implementations' policy CRDs).
func trimForRules(obj any) (any, error) {
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
			delete(m, "schema")
		}
	}
	return u, nil
}

// Store returns the server's store.
func (s *Server) Store() *Store { return s.store }

// Start discovers policy kinds, starts their feeds and serves until ctx ends; in-flight
// reviews finish before it returns.
func (s *Server) Start(ctx context.Context) error {
	if err := s.discover(ctx); err != nil {
		return err
	}
	if err := s.mgr.Add(manager.RunnableFunc(s.maintain)); err != nil {
		return err
	}
	return s.mgr.Start(ctx)
}

// discover starts a feed for every kind the rules read that the API server serves:
// the non-policy kinds, the table's policy kinds, and CRDs labelled as policies.
func (s *Server) discover(ctx context.Context) error {
	reader := s.mgr.GetAPIReader()
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(crdGVK)
	if err := reader.List(ctx, crds, client.HasLabels{rules.PolicyLabel}); err != nil {
		return fmt.Errorf("listing policy CRDs: %w", err)
	}
	for i := range crds.Items {
		s.addCRD(&crds.Items[i])
	}
	kinds := append([]schema.GroupKind(nil), nonPolicyKinds...)
	for _, row := range s.opts.Table.Rows() {
		kinds = append(kinds, row.GroupKind())
	}
	for _, gk := range kinds {
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
		AddFunc:    func(obj any) { s.onCRD(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.onCRD(ctx, obj) },
	})
	return err
}

func (s *Server) onCRD(ctx context.Context, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	gvk, ok := s.addCRD(u)
	if !ok {
		return
	}
	go func() {
		if err := s.watch(ctx, gvk); err != nil {
			s.opts.Log.Error(err, "watching discovered policy kind", "kind", gvk.String())
		}
	}()
}

// addCRD adds the discovered row of a labelled CRD and returns its served version.
func (s *Server) addCRD(u *unstructured.Unstructured) (schema.GroupVersionKind, bool) {
	row, gvk, ok := rowFromCRD(u)
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	if err := s.store.AddRow(row); err != nil {
		s.opts.Log.Error(err, "discovered policy kind has an unusable row", "kind", row.Kind)
		return schema.GroupVersionKind{}, false
	}
	return gvk, gvk.Version != ""
}

// rowFromCRD builds the discovered row of a CRD labelled as a policy kind, and the version
// its objects are stored at.
func rowFromCRD(u *unstructured.Unstructured) (rules.KindRow, schema.GroupVersionKind, bool) {
	value, labelled := u.GetLabels()[rules.PolicyLabel]
	if !labelled {
		return rules.KindRow{}, schema.GroupVersionKind{}, false
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	row, ok := rules.DiscoveredRow(group, kind, rules.Scope(scope), value)
	if !ok {
		return rules.KindRow{}, schema.GroupVersionKind{}, false
	}
	stored := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			row.Versions = append(row.Versions, name)
			if storage, _ := m["storage"].(bool); storage {
				stored = name
			}
		}
	}
	return row, schema.GroupVersionKind{Group: group, Version: stored, Kind: kind}, true
}

// watch starts the feed of one kind into the store.
func (s *Server) watch(ctx context.Context, gvk schema.GroupVersionKind) error {
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
	s.mu.Lock()
	s.feeds = append(s.feeds, f)
	s.mu.Unlock()
	startFeed(ctx, s.dyn, gvk, mapping.Resource, f)
	return nil
}

func (s *Server) feedsSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.feeds {
		if !f.synced.Load() {
			return false
		}
	}
	return true
}

// maintain marks the store ready once the CRD informer and every feed have synced, then
// expires reservations that no watch event confirmed.
func (s *Server) maintain(ctx context.Context) error {
	if !s.mgr.GetCache().WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	// Polled: a CRD discovered meanwhile adds a feed to wait for.
	waitStart := time.Now()
	for !s.feedsSynced() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.store.SetReady()
	// The first lists decoded every object of the cluster once; return that garbage to the
	// OS now rather than carry it as resident memory until the heap grows into it.
	debug.FreeOSMemory()
	s.opts.Log.Info("synced; ready", "waited", time.Since(waitStart).String())
	tick := time.NewTicker(ReservationTTL / 3)
	defer tick.Stop()
	var audits <-chan time.Time
	if s.opts.AuditInterval > 0 {
		s.audit()
		t := time.NewTicker(s.opts.AuditInterval)
		defer t.Stop()
		audits = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			reservationsExpired.Add(float64(s.store.ExpireReservations()))
		case <-audits:
			s.audit()
		}
	}
}

// audit runs the periodic audit and publishes its counts.
func (s *Server) audit() {
	start := time.Now()
	findings, audited := s.store.Audit()
	publishAudit(findings, audited, time.Since(start))
	if len(findings) > 0 {
		names := make([]string, 0, maxLoggedFindings)
		for _, f := range findings[:min(len(findings), maxLoggedFindings)] {
			names = append(names, f.Policy.Row.Kind+" "+f.Policy.Ref())
		}
		s.opts.Log.Info("audit: stored policies the rules would deny today; run `webhook audit` for the reasons",
			"policies", audited, "findings", len(findings), "first", names, "took", time.Since(start).String())
		return
	}
	s.opts.Log.Info("audit: every stored policy passes the rules", "policies", audited, "took", time.Since(start).String())
}

// maxLoggedFindings bounds the names an audit log line carries.
const maxLoggedFindings = 10

// instrument counts and times the reviews of one webhook.
func instrument(name string, inner admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		reviewsInFlight.Inc()
		start := time.Now()
		resp := inner.Handle(ctx, req)
		reviewSeconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
		reviewsInFlight.Dec()
		verdict, reason := "allowed", ""
		switch {
		case resp.Result != nil && resp.Result.Code >= 400 && resp.Result.Code != http.StatusUnprocessableEntity:
			verdict = "errored"
		case !resp.Allowed:
			verdict = "denied"
			if resp.Result != nil && resp.Result.Details != nil && len(resp.Result.Details.Causes) > 0 {
				reason = rules.ReasonIn(resp.Result.Details.Causes[0].Message)
			}
		}
		reviewsTotal.WithLabelValues(name, verdict, reason).Inc()
		return resp
	})
}
