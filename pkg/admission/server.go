package admission

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/claims"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Paths served on the HTTPS port.
const (
	PathValidate = "/validate"
	PathMutate   = "/mutate"
	// PathNamespaces reviews the namespace writes that touch SkipLabel (NamespaceGuard).
	PathNamespaces = "/validate-namespaces"
	// PathTargets reviews the deletion of policy targets (TargetGuard).
	PathTargets = "/validate-targets"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
)

// PathMetrics is Prometheus' metrics, on the metrics port alone (Options.MetricsAddress),
// never on the HTTPS review port.
const PathMetrics = "/metrics"

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
	// ConfirmWindow is how long an admitted policy may go without its watch event before the
	// API server is asked whether it stored it (clusterstate.DefaultConfirmWindow when zero).
	ConfirmWindow time.Duration
	// AuditInterval is how often the stored policies are audited (0: never).
	AuditInterval time.Duration
	// MetricsAddress serves /metrics (controller-runtime's metrics server): over HTTPS, to
	// callers the API server authenticates and authorizes for get on /metrics
	// (metricsOptions), or over plain HTTP to anyone with InsecureMetrics. ProbeAddress
	// serves /healthz and /readyz over plain HTTP. Empty or "0": not served (the HTTPS
	// review port answers the probes, never /metrics).
	MetricsAddress, ProbeAddress string
	// InsecureMetrics serves /metrics over plain HTTP without authentication
	// (`--metrics-secure=false`).
	InsecureMetrics bool
	// MetricsNamespaceLabel fills the namespace label of policyattachment_reviews_total
	// (`--metrics-namespace-label`); off, it is empty, and the metrics carry no names.
	MetricsNamespaceLabel bool
	// ClaimNamespace is where claims (coordination.k8s.io Leases) serialize conflicting
	// reviews across replicas (package claims); empty: no claims (one replica only).
	// Replica names this process on them.
	ClaimNamespace, Replica string
	Table                   *kinds.KindTable
	// Config holds the config file's enforcement modes and message settings (nil: defaults).
	Config *rules.Config
	Log    logr.Logger
	// ClientAuth, when set, answers on the HTTPS port only the callers it authenticates
	// (the API server's client certificate).
	ClientAuth *ClientAuth
	// Limits bound what each review door reads (body time, memory in flight).
	Limits Limits
	// OnSynced, when set, is called once every kind has been listed, before the first
	// lists' garbage is returned to the OS (`webhook serve` raises the collector's target
	// there).
	OnSynced func()
}

// Server is a running `webhook serve`.
type Server struct {
	opts  Options
	store *clusterstate.Store
	feeds *clusterstate.Feeds
	mgr   manager.Manager
	// lookup reads one policy from the API server, to confirm what reviews admitted.
	lookup clusterstate.Lookup
}

// NewServer builds the manager, the HTTPS server, the store and its feeds.
func NewServer(cfg *rest.Config, opts Options) (*Server, error) {
	hooks := newHooks(&opts)
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 runtime.NewScheme(),
		Cache:                  cache.Options{DefaultTransform: clusterstate.TrimForRules},
		Metrics:                metricsOptions(&opts),
		HealthProbeBindAddress: "0", // probeServer: the store's readiness, with its reasons
		WebhookServer:          hooks,
		Logger:                 opts.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	namespaceLabel.Store(opts.MetricsNamespaceLabel)
	// The feeds, the live reads and the claims go without a client-side rate limit (the
	// manager's is 20 requests a second). The API server's Priority and Fairness bounds them,
	// in the webhook's own priority level (deploy: its FlowSchema). A limit here would make
	// the start-up lists of a large cluster wait on the client (100,000 routes are 200 pages:
	// 10 s at 20 a second before any CPU is spent) and queue live reads behind one another
	// until their reviews time out; the live reads are a request or two per review the API
	// server itself chose to send.
	unlimited := rest.CopyConfig(cfg)
	unlimited.QPS = -1
	dyn, err := dynamic.NewForConfig(unlimited)
	if err != nil {
		return nil, fmt.Errorf("creating the client the feeds list and watch with: %w", err)
	}
	store := clusterstate.NewStore(opts.Table, index.New())
	store.UseConfig(opts.Config)
	rawConfig := rest.CopyConfig(unlimited)
	rawConfig.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	raw, err := rest.UnversionedRESTClientFor(rawConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the client the feeds list with: %w", err)
	}
	s := &Server{opts: opts, store: store, mgr: mgr, feeds: clusterstate.NewFeeds(store, mgr, dyn, raw, opts.Table, opts.Log)}
	v := &Validator{Store: store, Timeout: opts.ReviewTimeout}
	live, err := client.New(unlimited, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating the client live reads go through: %w", err)
	}
	if !opts.NoLiveReads {
		v.Live = live
	}
	s.lookup = clusterstate.LookupFrom(live, mgr.GetRESTMapper())
	if opts.ClaimNamespace != "" {
		leases, err := coordinationclient.NewForConfig(unlimited)
		if err != nil {
			return nil, fmt.Errorf("creating the client claims are written with: %w", err)
		}
		window := cmp.Or(opts.ConfirmWindow, clusterstate.DefaultConfirmWindow)
		claimer := &claims.Claimer{Leases: leases.Leases(opts.ClaimNamespace), Replica: opts.Replica,
			Duration: claimDuration(cmp.Or(opts.ReviewTimeout, DefaultReviewTimeout), window)}
		v.Claims = claimer
		if opts.ClientAuth == nil && opts.Limits.ClaimRate != nil {
			v.Claims = opts.Limits.ClaimRate.Wrap(claimer)
		}
		if err := mgr.Add(sweepClaims(claimer, clusterstate.ClaimedPolicyStored(s.lookup), opts.Log)); err != nil {
			return nil, err
		}
	}
	if opts.ClientAuth != nil || opts.ClaimNamespace == "" {
		opts.Limits.ClaimRate = nil // only the API server calls, or nothing is claimed
	}
	if a := orOff(opts.ProbeAddress); a != "0" {
		if err := mgr.Add(probeServer(a, store)); err != nil {
			return nil, err
		}
	}
	// GetWebhookServer (not the local variable) is what adds the server to the manager.
	register(mgr.GetWebhookServer(), store, v, &NamespaceGuard{Allowed: opts.Config.SkipLabelOrNone()}, opts.Limits)
	return s, nil
}

// orOff is an address, with "0" (off) for an empty one.
func orOff(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}

// newHooks is the HTTPS server of both `serve` modes, with opts' TLS settings.
func newHooks(opts *Options) webhook.Server {
	if opts.TLSMinVersion == 0 {
		opts.TLSMinVersion = tls.VersionTLS13
	}
	minVersion, http2, clients := opts.TLSMinVersion, opts.EnableHTTP2, opts.ClientAuth
	return webhook.NewServer(webhook.Options{Host: opts.Host, Port: opts.Port, CertDir: opts.CertDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = minVersion
			if !http2 {
				c.NextProtos = []string{"http/1.1"}
			}
			if clients != nil {
				clients.configure(c)
			}
		}}})
}

// register serves the reviews and the probes on hooks (the metrics have a port of their own).
// The four review doors share one memory budget: it bounds the process, not a path.
func register(hooks webhook.Server, store *clusterstate.Store, v *Validator, guard *NamespaceGuard, limits Limits) {
	hooks.Register(PathValidate, closeWhenDraining(store, boundedReviewHandler("validate", v, limits)))
	hooks.Register(PathNamespaces, closeWhenDraining(store, boundedReviewHandler("namespaces", guard, limits)))
	hooks.Register(PathMutate, closeWhenDraining(store, boundedReviewHandler("mutate", &Mutator{Store: store}, limits)))
	hooks.Register(PathTargets, closeWhenDraining(store, boundedReviewHandler("targets", &TargetGuard{Store: store}, limits)))
	hooks.Register(PathHealthz, healthz())
	hooks.Register(PathReadyz, readyz(store))
}

// closeWhenDraining answers a review as usual, but while the process shuts down it closes
// the connection after the answer: the API server's next review then dials anew, and
// finds the replicas still ready, instead of reusing a connection this one is about to
// close (a POST on a closed connection fails, and with failurePolicy Fail so does the write).
func closeWhenDraining(store *clusterstate.Store, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if store.Draining() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// readyz answers 200 only once every kind the rules read has been listed (before that, a
// review would be judged against a partial view of the cluster), and not while draining.
func readyz(store *clusterstate.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case store.Draining():
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
		case !store.Ready():
			http.Error(w, "not every kind the rules read has been listed yet", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	})
}

// Store returns the server's store.
func (s *Server) Store() *clusterstate.Store { return s.store }

// Start discovers policy kinds, starts their feeds and serves until ctx ends; in-flight
// reviews finish before it returns.
func (s *Server) Start(ctx context.Context) error {
	if err := s.feeds.Start(ctx); err != nil {
		return err
	}
	if err := s.mgr.Add(manager.RunnableFunc(s.maintain)); err != nil {
		return err
	}
	return s.mgr.Start(ctx)
}

// maintain marks the store ready once the CRD informer and every feed have synced, then
// expires reservations that no watch event confirmed.
func (s *Server) maintain(ctx context.Context) error {
	if !s.mgr.GetCache().WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	// Polled: a CRD discovered meanwhile adds a feed to wait for.
	waitStart := time.Now()
	for !s.feeds.Synced() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.store.SetReady()
	if s.opts.OnSynced != nil {
		s.opts.OnSynced()
	}
	// The first lists decoded every object of the cluster once; return that garbage to the
	// OS now rather than carry it as resident memory until the heap grows into it.
	debug.FreeOSMemory()
	s.opts.Log.Info("synced; ready", "waited", time.Since(waitStart).String())
	tick := time.NewTicker(clusterstate.ReservationTTL / 3)
	defer tick.Stop()
	window := cmp.Or(s.opts.ConfirmWindow, clusterstate.DefaultConfirmWindow)
	confirm := time.NewTicker(window / 4)
	defer confirm.Stop()
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
		case <-confirm.C:
			s.store.ConfirmReservations(ctx, window, s.lookup)
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
	publishPredictions(s.store, findings, s.opts.Log)
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
		case resp.Result != nil && resp.Result.Code >= 400 && resp.Result.Code != http.StatusUnprocessableEntity &&
			(resp.Result.Code != http.StatusForbidden || resp.Allowed): // 422 and 403 are verdicts (Invalid, Forbidden)
			verdict = "errored"
		case !resp.Allowed:
			verdict, reason = "denied", resp.AuditAnnotations[AuditReason]
		}
		dryRun := "false"
		if req.DryRun != nil && *req.DryRun {
			dryRun = "true"
		}
		reviewsTotal.WithLabelValues(name, verdict, reason, req.Kind.Group, req.Kind.Kind, reviewedNamespace(req.Namespace), string(req.Operation), dryRun).Inc()
		return resp
	})
}

// ClaimsSweepInterval is how often each replica sweeps the claims (claims.Claimer.Sweep): a
// claim no replica gave back (its replica was killed mid-review) is gone at most this long
// after it expired.
const ClaimsSweepInterval = 10 * time.Second

// AbandonedClaimsGoneWithin is how long after it was taken a claim that no replica gave back
// (its replica was killed mid-review, or lost a write's answer) may last, with the review
// deadline and confirm window given (zero: the defaults): its duration, then up to a sweep's
// interval, and a second for the sweep's requests.
func AbandonedClaimsGoneWithin(reviewTimeout, window time.Duration) time.Duration {
	return claimDuration(cmp.Or(reviewTimeout, DefaultReviewTimeout), cmp.Or(window, clusterstate.DefaultConfirmWindow)) + ClaimsSweepInterval + time.Second
}

// claimDuration is how long a claim lasts unreleased: claims.DefaultDuration, or longer when
// the review's deadline and the confirm window (a replica keeps a claim until the API server
// says it did not store the policy) need more, so that no claim expires, and is swept,
// while its replica holds it for a write the API server may still store.
func claimDuration(reviewTimeout, window time.Duration) time.Duration {
	return max(claims.DefaultDuration, reviewTimeout+window+window/4+2*time.Second)
}

// sweepClaims sweeps the claims when the manager starts (what replicas gone meanwhile left)
// and every ClaimsSweepInterval until it stops.
func sweepClaims(c *claims.Claimer, stored claims.Stored, log logr.Logger) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		t := time.NewTicker(ClaimsSweepInterval)
		defer t.Stop()
		for {
			if err := c.Sweep(ctx, stored); err != nil && ctx.Err() == nil {
				log.Error(err, "sweeping the claims failed; the next sweep tries again", "in", ClaimsSweepInterval.String())
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
}
