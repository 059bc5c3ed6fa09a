// Package reviewlog carries the admission review a request serves in its context, so that a
// line logged about it anywhere below the HTTPS door (a live read that failed, a handler
// that panicked) names the review's UID, as the API server's audit log does.
package reviewlog

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Review is the review a request serves.
type Review interface {
	ReviewUID() types.UID
}

type key struct{}

// Into returns ctx carrying r. r is held as it is (a pointer costs no copy).
func Into(ctx context.Context, r Review) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// From returns the review ctx carries.
func From(ctx context.Context) (Review, bool) {
	r, ok := ctx.Value(key{}).(Review)
	return r, ok
}

// Logger is ctx's logger, with the review's UID when ctx carries one. Call it only when a
// line will be logged: it builds a logger.
func Logger(ctx context.Context) logr.Logger {
	log := logf.FromContext(ctx)
	if r, ok := From(ctx); ok {
		return log.WithValues("uid", r.ReviewUID())
	}
	return log
}
