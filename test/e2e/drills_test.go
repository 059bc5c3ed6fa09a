//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// drillPolicy is a BackendTLSPolicy on Service svc's https port; two on one Service conflict.
func drillPolicy(name, svc string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": map[string]any{"name": name, "namespace": "e2e-drill"},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": svc, "sectionName": "https"}},
			"validation": map[string]any{"hostname": name + ".example", "wellKnownCACertificates": "System"},
		},
	}}
}

func drillService(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "e2e-drill"},
		"spec":     map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}},
	}}
}

// Killed (SIGKILL, no graceful shutdown) in the middle of a steady apply loop and started
// again: while it is gone writes fail (failurePolicy Fail); while it starts it refuses
// (it has not listed every kind yet); once ready it judges against everything stored before.
// At no point is a policy conflicting with a stored one admitted. The claims the killed
// replicas held are not left behind: admission.AbandonedClaimsGoneWithin (21 s) after the
// restart, no claim Lease is held, and none is there that was not before the loop.
func TestKilledDuringApplyLoop(t *testing.T) {
	cl, _ := newClient(t)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "e2e-drill"}}}
	apply(t, cl, ns)
	const services = 20
	for i := 0; i < services; i++ {
		svc := fmt.Sprintf("loop-%d", i)
		require.NoError(t, cl.Create(ctx, drillService(svc)))
		require.Equal(t, "<created>", createErr(cl, drillPolicy(svc+"-first", svc)))
	}

	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		admitted []string
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			svc := fmt.Sprintf("loop-%d", i%services)
			name := fmt.Sprintf("%s-attempt-%d", svc, i)
			err := cl.Create(ctx, drillPolicy(name, svc))
			kind := ""
			switch {
			case err == nil:
				kind = "ADMITTED"
			case strings.Contains(err.Error(), "Conflicted: Service e2e-drill/"+svc+" section https already has BackendTLSPolicy e2e-drill/"+svc+"-first"):
				kind = "denied: Conflicted"
			case strings.Contains(err.Error(), "has not read the cluster's policies yet"):
				kind = "refused: starting"
			case strings.Contains(err.Error(), "claiming the attachment points") && strings.Contains(err.Error(), "Unauthorized"):
				// A pod deleted with no grace period runs on until the kubelet stops it, and
				// its bound ServiceAccount token dies with the Pod object: its Lease write is
				// refused (401), so it refuses the review: fail closed, nothing admitted.
				kind = "refused: killed pod's credentials"
			case strings.Contains(err.Error(), "being admitted at the same attachment point, which was neither stored nor given up"):
				// The killed pod claimed the attachment point for a review it never finished:
				// the claim is neither stored nor released, so a review waiting on it is
				// refused at its deadline: fail closed, nothing admitted.
				kind = "refused: killed pod's claim"
			case strings.Contains(err.Error(), "failed calling webhook"):
				kind = "failed: webhook unreachable"
				time.Sleep(20 * time.Millisecond) // do not spin on connection refused
			default:
				kind = "other: " + err.Error()
			}
			mu.Lock()
			outcomes[kind]++
			if err == nil {
				admitted = append(admitted, name)
			}
			mu.Unlock()
		}
	}()

	before := claimLeasesNow(t, cs)
	time.Sleep(time.Second)
	webhook(t, "kill")
	time.Sleep(2 * time.Second)
	webhook(t, "start")
	restarted := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	<-done
	rightAfter := claimLeasesNow(t, cs)
	bound := admission.AbandonedClaimsGoneWithin(0, 0)
	time.Sleep(time.Until(restarted.Add(bound)))
	after := claimLeasesNow(t, cs)
	var held []string
	for name, holder := range after {
		if holder != "" {
			held = append(held, name+" held for "+holder)
		}
	}
	t.Logf("claim Leases: %d before the kill, %d right after the loop (%d held), %d once %s passed since the restart (%d held)",
		len(before), len(rightAfter), len(rightAfter)-countReleased(rightAfter), len(after), bound, len(held))
	assert.Empty(t, held, "no claim of the killed replicas is held %s after the restart", bound)
	assert.Empty(t, testkit.LeasesAdded(before, after), "no Lease the loop took is left but those at its Services")

	t.Logf("outcomes of policies conflicting with a stored one: %v", outcomes)
	assert.Empty(t, admitted, "a conflicting policy was admitted")
	assert.Positive(t, outcomes["denied: Conflicted"], "judged before the kill and after the restart")
	if os.Getenv("E2E_WEBHOOK_CONTROL") != "" {
		// The local harness kills its one process outright. A Deployment's killed pods are
		// replaced at once, and a pod told to stop keeps answering for --shutdown-delay,
		// so there may be no gap at all to observe there.
		assert.Positive(t, outcomes["failed: webhook unreachable"], "the loop ran while the webhook was gone")
	}
	for kind := range outcomes {
		assert.Contains(t, []string{"denied: Conflicted", "refused: starting", "refused: killed pod's credentials", "refused: killed pod's claim", "failed: webhook unreachable"}, kind)
	}
}

// countReleased counts the Leases without a holder.
func countReleased(leases map[string]string) int {
	n := 0
	for _, holder := range leases {
		if holder == "" {
			n++
		}
	}
	return n
}

// A review that cannot finish in time is refused by the webhook's own deadline, in its own
// words, long before the API server's timeout (timeoutSeconds: 5) would answer instead.
func TestSlowReviewAnswersBeforeTheAPIServerTimeout(t *testing.T) {
	restartWebhookWith(t, "--review-timeout=1ns") // every review misses its deadline
	cl, _ := newClient(t)
	apply(t, cl, load(t, "topology.yaml")...)
	policy := load(t, "warning.yaml")[0]
	policy.SetName("slow")
	start := time.Now()
	got := createErr(cl, policy)
	took := time.Since(start)
	assert.Equal(t, denied+"policy attachment review of ColorPolicy e2e-app/slow did not finish within 1ns (--review-timeout): the write was not checked, so it is refused; "+
		"retry, and if it persists see the webhook's log and policyattachment_live_read_errors_total", got)
	assert.Less(t, took, 5*time.Second, "answered by the webhook, not by the API server's timeout")
}
