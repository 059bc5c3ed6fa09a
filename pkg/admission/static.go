package admission

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/policyattachment/webhook/pkg/rules"
)

// StaticServer serves the same endpoints as Server from a fixed snapshot and no API
// server: for load tests and demos (`webhook serve --snapshot-from FILE`). It is ready at
// once; reservations still apply within the run.
type StaticServer struct {
	hooks webhook.Server
	store *Store
}

// NewStaticServer serves snap over TLS with the given options.
func NewStaticServer(snap *rules.MemorySnapshot, opts Options) *StaticServer {
	if opts.TLSMinVersion == 0 {
		opts.TLSMinVersion = tls.VersionTLS13
	}
	hooks := webhook.NewServer(webhook.Options{Host: opts.Host, Port: opts.Port, CertDir: opts.CertDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = opts.TLSMinVersion
			if !opts.EnableHTTP2 {
				c.NextProtos = []string{"http/1.1"}
			}
		}}})
	store := NewStore(opts.Table, snap)
	store.UseSettings(opts.Settings)
	store.SetReady()
	hooks.Register(PathValidate, reviewHandler("validate", &Validator{Store: store, Timeout: opts.ReviewTimeout}))
	hooks.Register(PathMutate, reviewHandler("mutate", &Mutator{Store: store}))
	hooks.Register(PathHealthz, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	hooks.Register(PathReadyz, readyz(store))
	hooks.Register(PathMetrics, promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	return &StaticServer{hooks: hooks, store: store}
}

// Start serves until ctx ends.
func (s *StaticServer) Start(ctx context.Context) error { return s.hooks.Start(ctx) }
