//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestNoConflictAdmittedThroughTheDeployment: the shipped Deployment's two replicas behind
// its Service, as the API server reaches them on a real node. On a fresh headless Service
// each, pairs of conflicting BackendTLSPolicies are created from two clients at the same
// instant and 1, 5 and 20 ms apart, then at the same instant while one replica is deleted
// and replaced: one of each pair is admitted, never both. Both replicas must have judged
// some of them (their denial log lines), or the pairs proved nothing about replicas.
// test/integration/replicas_test.go runs 500 pairs per spacing through three replicas on the
// local control plane.
func TestNoConflictAdmittedThroughTheDeployment(t *testing.T) {
	cl, cs := deployed(t)
	other, _ := newClient(t)
	ctx := context.Background()
	const namespace, pairs = "e2e-pairs", 48
	apply(t, cl, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}})
	t.Cleanup(func() {
		_ = cl.Delete(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}})
	})
	policy := func(name, svc string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": map[string]any{"name": name, "namespace": namespace},
			"spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": svc, "sectionName": "https"}},
				"validation": map[string]any{"hostname": svc + ".example", "wellKnownCACertificates": "System"},
			},
		}}
	}
	// pair creates two conflicting policies on a fresh Service, the second spacing after the
	// first, and returns how many were admitted and the denials that were not the expected
	// Conflicted.
	pair := func(svc string, spacing time.Duration) (int32, []string) {
		err := cl.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": svc, "namespace": namespace},
			"spec":     map[string]any{"clusterIP": "None", "ports": []any{map[string]any{"name": "https", "port": int64(443)}}},
		}})
		if err != nil {
			return 0, []string{"creating Service " + svc + ": " + err.Error()}
		}
		var wg sync.WaitGroup
		var admitted atomic.Int32
		var mu sync.Mutex
		var refusals []string
		start := make(chan struct{})
		for j, c := range []client.Client{cl, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if j == 1 {
					time.Sleep(spacing)
				}
				err := c.Create(ctx, policy(fmt.Sprintf("p%d-%s", j, svc), svc))
				if err == nil {
					admitted.Add(1)
					return
				}
				if !strings.Contains(err.Error(), "Conflicted: Service "+namespace+"/"+svc+" section https already has BackendTLSPolicy "+namespace+"/p") {
					mu.Lock()
					refusals = append(refusals, err.Error())
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		return admitted.Load(), refusals
	}
	// run sends rounds of 8 pairs at once, each pair on a Service of its own, until it has
	// sent pairs and until done holds. Sixteen writes at once open connections of the API
	// server's to the Service, which its proxy spreads over both replicas; one pair at a time
	// can ride one kept-alive connection to one replica for the whole run.
	run := func(label string, spacing time.Duration, done func() bool) {
		var both, one, none, sent atomic.Int32
		var mu sync.Mutex
		var refusals []string
		deadline := time.Now().Add(3 * time.Minute)
		for round := 0; int(sent.Load()) < pairs || !done(); round++ {
			require.True(t, time.Now().Before(deadline), "%s: not done within 3 minutes", label)
			var wg sync.WaitGroup
			for k := 0; k < 8; k++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					admitted, r := pair(fmt.Sprintf("%s-%d-%d", label, round, k), spacing)
					sent.Add(1)
					switch admitted {
					case 2:
						both.Add(1)
					case 1:
						one.Add(1)
					default:
						none.Add(1)
					}
					mu.Lock()
					refusals = append(refusals, r...)
					mu.Unlock()
				}()
			}
			wg.Wait()
		}
		t.Logf("%s: %d pairs %s apart: both admitted %d, one %d, none %d", label, sent.Load(), spacing, both.Load(), one.Load(), none.Load())
		assert.Zero(t, both.Load(), "%s: pairs both admitted", label)
		assert.Equal(t, sent.Load(), one.Load(), "%s: one of each pair admitted", label)
		assert.Empty(t, refusals, "%s: every loser of a pair denied as Conflicted with the winner", label)
	}
	always := func() bool { return true }
	for _, spacing := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		run(fmt.Sprintf("s%d", spacing.Milliseconds()), spacing, always)
	}
	judged := judgedPerReplica(t, cs, namespace)
	t.Logf("denials logged per replica: %v", judged)
	require.Len(t, judged, 2)
	for pod, n := range judged {
		assert.Positive(t, n, "replica %s judged none of the pairs", pod)
	}

	// One replica deleted (gracefully, as a drain does) while pairs keep coming, until its
	// replacement is ready.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	victim := pods.Items[0].Name
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{}))
	run("restart", 0, replaced(t, cs, victim))
}

// judgedPerReplica counts, per running webhook pod, the log lines of denials in namespace.
func judgedPerReplica(t *testing.T, cs kubernetes.Interface, namespace string) map[string]int {
	t.Helper()
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	judged := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		require.NoError(t, err)
		judged[p.Name] = strings.Count(string(data), `"namespace":"`+namespace+`"`)
	}
	return judged
}
