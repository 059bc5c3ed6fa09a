package admission

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/policyattachment/webhook/pkg/clusterstate"
)

// probeServer serves /healthz and /readyz over plain HTTP on addr, apart from the review
// port: the kubelet probes need no TLS, and a probe never waits behind reviews. It stops
// when the manager does, after the shutdown delay in which /readyz already says
// "shutting down".
func probeServer(addr string, store *clusterstate.Store) manager.Runnable {
	mux := http.NewServeMux()
	mux.Handle(PathHealthz, healthz())
	mux.Handle(PathReadyz, readyz(store))
	return plainServer(addr, "the probes", "", mux)
}

// plainServer serves handler (at path, or a mux when path is empty) over plain HTTP on addr
// until ctx ends.
func plainServer(addr, what, path string, handler http.Handler) manager.Runnable {
	if path != "" {
		mux := http.NewServeMux()
		mux.Handle(path, handler)
		handler = mux
	}
	return manager.RunnableFunc(func(ctx context.Context) error {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("serving %s on %s: %w", what, addr, err)
		}
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}

func healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
}
