package admission

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
)

// StaticServer serves the same endpoints as Server from a fixed snapshot and no API
// server: for load tests and demos (`webhook serve --snapshot-from FILE`). It is ready at
// once; reservations still apply within the run.
type StaticServer struct {
	hooks webhook.Server
	store *clusterstate.Store
	opts  Options
}

// NewStaticServer serves snap over TLS with the given options.
func NewStaticServer(snap *index.Snapshot, opts Options) *StaticServer {
	hooks := newHooks(&opts)
	store := clusterstate.NewStore(opts.Table, snap)
	store.UseConfig(opts.Config)
	store.SetReady()
	namespaceLabel.Store(opts.MetricsNamespaceLabel)
	register(hooks, store, &Validator{Store: store, Timeout: opts.ReviewTimeout}, &NamespaceGuard{Allowed: opts.Config.SkipLabelOrNone()}, opts.Limits)
	return &StaticServer{hooks: hooks, store: store, opts: opts}
}

// Start serves until ctx ends: the reviews over TLS and, as Server does, the probes and
// metrics on their own plain-HTTP addresses when set. With no API server to authenticate
// and authorize the callers of /metrics, it serves them only when told to do so without
// (InsecureMetrics), and otherwise refuses to start.
func (s *StaticServer) Start(ctx context.Context) error {
	if a := orOff(s.opts.MetricsAddress); a != "0" && !s.opts.InsecureMetrics {
		return fmt.Errorf("serving /metrics on %s: a fixed snapshot has no API server to authenticate and authorize their callers; "+
			"--metrics-secure=false serves them over plain HTTP to anyone, --metrics-bind-address=0 not at all", a)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runnables := []manager.Runnable{s.hooks}
	if a := orOff(s.opts.ProbeAddress); a != "0" {
		runnables = append(runnables, probeServer(a, s.store))
	}
	if a := orOff(s.opts.MetricsAddress); a != "0" {
		runnables = append(runnables, plainServer(a, "metrics", PathMetrics, promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{})))
	}
	errs := make(chan error, len(runnables))
	for _, r := range runnables {
		go func() { errs <- r.Start(ctx) }()
	}
	var first error
	for range runnables {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel() // one failed: stop the others
		}
	}
	return first
}
