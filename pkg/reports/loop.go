package reports

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Loop writes the Reports every Interval from a fresh read of the cluster.
type Loop struct {
	// Read returns the cluster's state as the rules see it.
	Read func(context.Context) (topology.State, error)
	// ReadWithStatuses, when set, is used instead of Read: it also returns what the
	// controllers wrote into the policies' status, compared with the predictions.
	ReadWithStatuses func(context.Context) (topology.State, *impact.Observations, error)
	Config           *rules.Config
	Writer           *Writer
	Interval         time.Duration
	Log              logr.Logger
}

// Run writes a round at once, then one every Interval until ctx ends. A failed round is
// logged and retried at the next tick; Run returns only when ctx ends.
func (l *Loop) Run(ctx context.Context) {
	tick := time.NewTicker(l.Interval)
	defer tick.Stop()
	for {
		if _, err := l.Round(ctx); err != nil && ctx.Err() == nil {
			l.Log.Error(err, "writing the reports failed; retrying at the next interval", "interval", l.Interval.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Round reads the cluster, builds the Reports and writes those that changed.
func (l *Loop) Round(ctx context.Context) (Stats, error) {
	start := time.Now()
	var state topology.State
	var observed *impact.Observations
	var err error
	if l.ReadWithStatuses != nil {
		state, observed, err = l.ReadWithStatuses(ctx)
	} else {
		state, err = l.Read(ctx)
	}
	if err != nil {
		return Stats{}, err
	}
	desired := BuildWith(state, l.Config, observed)
	stats, err := l.Writer.Sync(ctx, desired)
	if err != nil {
		var noKind *meta.NoKindMatchError
		if errors.As(err, &noKind) {
			return stats, errors.New("the OpenReports CRD (reports.openreports.io, version v1alpha1) is not installed; install it first (docs/reports.md)")
		}
		return stats, err
	}
	l.Log.Info("reports written", "namespaces", len(desired), "created", stats.Created, "updated", stats.Updated,
		"deleted", stats.Deleted, "unchanged", stats.Unchanged, "took", time.Since(start).Round(time.Millisecond).String())
	return stats, nil
}
