package admission

import (
	"context"

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
}

// NewStaticServer serves snap over TLS with the given options.
func NewStaticServer(snap *index.Snapshot, opts Options) *StaticServer {
	hooks := newHooks(&opts)
	store := clusterstate.NewStore(opts.Table, snap)
	store.UseConfig(opts.Config)
	store.SetReady()
	register(hooks, store, &Validator{Store: store, Timeout: opts.ReviewTimeout}, &NamespaceGuard{Allowed: opts.Config.SkipLabelOrNone()})
	return &StaticServer{hooks: hooks, store: store}
}

// Start serves until ctx ends.
func (s *StaticServer) Start(ctx context.Context) error { return s.hooks.Start(ctx) }
