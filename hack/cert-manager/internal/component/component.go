// Package component is what the cert-manager components built for the e2e harness share:
// cert-manager's logging, a context that ends on SIGINT or SIGTERM, and one exit path.
package component

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	logf "github.com/cert-manager/cert-manager/pkg/logs"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Main runs run with a context named for the component, and exits 1 when it fails.
func Main(name string, run func(context.Context) error) {
	logf.InitLogs()
	defer logf.FlushLogs()
	ctrl.SetLogger(logf.Log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	ctx = logf.NewContext(ctx, logf.Log, name)
	err := run(ctx)
	stop()
	if err != nil {
		logf.FromContext(ctx).Error(err, name+" stopped")
		logf.FlushLogs()
		os.Exit(1)
	}
}
