package reports

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writer brings the cluster's Reports (those labelled as ours) to what Build returned.
type Writer struct {
	Client client.Client
	// Limiter bounds the write rate; each create, update and delete takes a token.
	Limiter flowcontrol.RateLimiter
	// Now stamps results that are new or changed; time.Now when nil.
	Now func() time.Time
}

// Stats counts what one Sync did.
type Stats struct {
	Created, Updated, Deleted, Unchanged int
}

// Sync writes each desired Report that differs from the stored one, and deletes ours in
// namespaces that no longer hold policies. A result that has not changed keeps its stored
// timestamp, so a Report whose results are the same is not rewritten. A namespace being
// deleted (or gone) is skipped; any other error stops the round.
func (w *Writer) Sync(ctx context.Context, desired map[string]*reportsv1alpha1.Report) (Stats, error) {
	var stats Stats
	stored := &reportsv1alpha1.ReportList{}
	if err := w.Client.List(ctx, stored, client.MatchingLabels{ManagedByLabel: ManagedBy}); err != nil {
		return stats, fmt.Errorf("listing reports: %w", err)
	}
	have := map[string]*reportsv1alpha1.Report{}
	for i := range stored.Items {
		if r := &stored.Items[i]; r.Name == Name {
			have[r.Namespace] = r
		}
	}
	now := metav1.Timestamp{Seconds: w.now().Unix()}
	for _, namespace := range slices.Sorted(maps.Keys(desired)) {
		want := desired[namespace].DeepCopy()
		old := have[namespace]
		stamp(want.Results, old, now)
		switch {
		case old == nil:
			if err := w.write(ctx, func() error { return w.Client.Create(ctx, want) }); err != nil {
				if gone(err) {
					continue
				}
				return stats, fmt.Errorf("creating report %s/%s: %w", namespace, Name, err)
			}
			stats.Created++
		case equality.Semantic.DeepEqual(old.Results, want.Results) && old.Summary == want.Summary &&
			old.Source == want.Source && old.Labels[ManagedByLabel] == ManagedBy:
			stats.Unchanged++
		default:
			want.ResourceVersion = old.ResourceVersion
			want.Labels = mergeLabels(old.Labels, want.Labels)
			want.Annotations = old.Annotations
			if err := w.write(ctx, func() error { return w.Client.Update(ctx, want) }); err != nil {
				if gone(err) {
					continue
				}
				return stats, fmt.Errorf("updating report %s/%s: %w", namespace, Name, err)
			}
			stats.Updated++
		}
	}
	for namespace, old := range have {
		if _, ok := desired[namespace]; ok {
			continue
		}
		if err := w.write(ctx, func() error { return w.Client.Delete(ctx, old) }); err != nil && !apierrors.IsNotFound(err) {
			return stats, fmt.Errorf("deleting report %s/%s: %w", namespace, Name, err)
		}
		stats.Deleted++
	}
	return stats, nil
}

func (w *Writer) write(ctx context.Context, do func() error) error {
	if w.Limiter != nil {
		if err := w.Limiter.Wait(ctx); err != nil {
			return err
		}
	}
	return do()
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// stamp gives each result the timestamp of the same stored result (same rule, subject and
// content), or now.
func stamp(results []reportsv1alpha1.ReportResult, old *reportsv1alpha1.Report, now metav1.Timestamp) {
	previous := map[string][]reportsv1alpha1.ReportResult{}
	if old != nil {
		for _, p := range old.Results {
			previous[resultKey(p)] = append(previous[resultKey(p)], p)
		}
	}
	for i := range results {
		results[i].Timestamp = now
		for _, p := range previous[resultKey(results[i])] {
			candidate := results[i]
			candidate.Timestamp = p.Timestamp
			if equality.Semantic.DeepEqual(candidate, p) {
				results[i].Timestamp = p.Timestamp
				break
			}
		}
	}
}

func resultKey(r reportsv1alpha1.ReportResult) string {
	return subjectKey(r) + "\x00" + r.Rule + "\x00" + r.Description
}

// gone reports an error that means the namespace is being deleted or no longer exists.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, "NamespaceTerminating")
}

func mergeLabels(stored, ours map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range ours {
		out[k] = v
	}
	return out
}
