//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMissingPermissionKeepsReadinessDown runs where the webhook is deployed with the shipped
// ClusterRole (make e2e-node sets E2E_DEPLOYED=1): without list on one built-in policy kind,
// a restarted webhook never turns ready, and says which permission it misses; given back, it
// does. (With failurePolicy Fail, the other replica keeps serving meanwhile: here both are
// restarted, as after an upgrade that shipped a bad ClusterRole.)
func TestMissingPermissionKeepsReadinessDown(t *testing.T) {
	_, cs := deployed(t)
	ctx := context.Background()
	const role = "policyattachment-webhook"
	original, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
	require.NoError(t, err)
	defer func() {
		current, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		require.NoError(t, err)
		current.Rules = original.Rules
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, current, metav1.UpdateOptions{})
		require.NoError(t, err)
		restartWebhookPods(t, cs, ns)
		waitReady(t, cs, ns, 2, 90*time.Second)
	}()

	broken := original.DeepCopy()
	for i, r := range broken.Rules {
		if slices.Contains(r.Resources, "colorpolicies") {
			broken.Rules[i].Verbs = []string{"get", "watch"} // list removed
		}
	}
	_, err = cs.RbacV1().ClusterRoles().Update(ctx, broken, metav1.UpdateOptions{})
	require.NoError(t, err)
	restartWebhookPods(t, cs, ns)

	// The replicas start, log the missing permission, and stay unready.
	const want = "the webhook may not list this kind: grant its ServiceAccount get, list and watch on it"
	var logs string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		logs = webhookLogs(t, cs, ns)
		if strings.Contains(logs, want) && strings.Contains(logs, `"resource":"colorpolicies"`) {
			break
		}
		time.Sleep(time.Second)
	}
	require.Contains(t, logs, want)
	time.Sleep(10 * time.Second) // several readiness probes
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	require.NotEmpty(t, pods.Items)
	for _, p := range pods.Items {
		require.False(t, podReady(&p), "pod %s turned ready without list on colorpolicies", p.Name)
	}
}

// ns is the webhook's namespace in the shipped manifests.
const ns = "policyattachment-system"

// deployed skips a test unless the webhook runs as the shipped Deployment (E2E_DEPLOYED=1,
// set by make e2e-node and make e2e-kind), waits for both replicas, and returns clients.
func deployed(t *testing.T) (client.Client, kubernetes.Interface) {
	t.Helper()
	if os.Getenv("E2E_DEPLOYED") == "" {
		t.Skip("needs the webhook deployed as a Deployment (make e2e-node)")
	}
	cl, _ := newClient(t)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	waitReady(t, cs, ns, 2, 90*time.Second)
	waitServed(t, cl)
	return cl, cs
}

// waitServed waits until the API server reaches the webhook through its Service: pods turn
// ready before kube-proxy routes the Service to them (on kind, a second or more after), and
// a test that starts in that gap sees "connection refused", which is not what it tests.
// A dry-run policy in the default namespace is reviewed and writes nothing.
func waitServed(t *testing.T, cl client.Client) {
	t.Helper()
	probe := drillPolicy("e2e-reachable", "e2e-reachable")
	probe.SetNamespace("default")
	eventuallyWithin(t, 60*time.Second, func() error {
		err := cl.Create(context.Background(), probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			return err
		}
		return nil
	})
}

func restartWebhookPods(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	require.NoError(t, cs.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"}))
}

func waitReady(t *testing.T, cs kubernetes.Interface, ns string, want int, within time.Duration) {
	t.Helper()
	eventuallyWithin(t, within, func() error {
		pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods.Items {
			if pods.Items[i].DeletionTimestamp == nil && podReady(&pods.Items[i]) {
				ready++
			}
		}
		if ready != want {
			return fmt.Errorf("%d ready, want %d", ready, want)
		}
		return nil
	})
}

func eventuallyWithin(t *testing.T, within time.Duration, fn func() error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(time.Second) {
		if last = fn(); last == nil {
			return
		}
	}
	require.NoError(t, last)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// webhookLogs returns the logs of every webhook pod, one after the other.
func webhookLogs(t *testing.T, cs kubernetes.Interface, ns string) string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	var b strings.Builder
	for _, p := range pods.Items {
		data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

// TestRollingRestartDropsNoReview restarts the Deployment (kubectl rollout restart) during a
// steady loop of policies that conflict with stored ones: the rolling update keeps a ready
// replica behind the Service throughout, so every review is answered and every conflict
// denied: no write fails for want of a webhook, and none slips through. (On this one node
// the endpoints follow within the loop's pace even without --shutdown-delay; the delay is
// for API servers whose view of the endpoints lags more.)
func TestRollingRestartDropsNoReview(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "policyattachment-webhook", metav1.GetOptions{})
	require.NoError(t, err)
	generation := d.Generation
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339Nano)
	_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
	require.NoError(t, err)
	rolledOut := func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "policyattachment-webhook", metav1.GetOptions{})
		require.NoError(t, err)
		return d.Status.ObservedGeneration > generation && d.Status.UpdatedReplicas == 2 &&
			d.Status.ReadyReplicas == 2 && d.Status.Replicas == 2
	}
	conflictLoop(t, cl, "rolling", "the rolling restart", rolledOut)
}

// TestDeletedPodDropsNoReview deletes one of the two replicas (gracefully, as a drain or an
// eviction does) during the loop: the other answers meanwhile.
func TestDeletedPodDropsNoReview(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	victim := pods.Items[0].Name
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{}))
	conflictLoop(t, cl, "deleted", "the deletion of pod "+victim, replaced(t, cs, victim))
}

// replaced reports whether a deleted webhook pod is gone and two replicas are ready.
func replaced(t *testing.T, cs kubernetes.Interface, victim string) func() bool {
	return func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
		require.NoError(t, err)
		ready := 0
		for i := range pods.Items {
			if pods.Items[i].Name == victim {
				return false // still terminating
			}
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		return ready == 2
	}
}

// conflictLoop creates, one after another, policies that conflict with stored ones, until
// done has held for three seconds (checked every twenty writes), and requires that every
// one was answered and denied.
func conflictLoop(t *testing.T, cl client.Client, prefix, during string, done func() bool) {
	t.Helper()
	ctx := context.Background()
	apply(t, cl, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "e2e-drill"}}})
	const services = 10
	for i := 0; i < services; i++ {
		svc := fmt.Sprintf("%s-%d", prefix, i)
		apply(t, cl, drillService(svc))
		apply(t, cl, drillPolicy(svc+"-first", svc))
	}
	outcomes := map[string]int{}
	var admitted []string
	var after time.Time
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		if after.IsZero() && i%20 == 0 && done() {
			after = time.Now().Add(3 * time.Second)
		}
		if !after.IsZero() && time.Now().After(after) {
			break
		}
		svc := fmt.Sprintf("%s-%d", prefix, i%services)
		name := fmt.Sprintf("%s-attempt-%d", svc, i)
		err := cl.Create(ctx, drillPolicy(name, svc))
		switch {
		case err == nil:
			outcomes["ADMITTED"]++
			admitted = append(admitted, name)
		case strings.Contains(err.Error(), "Conflicted: Service e2e-drill/"+svc+" section https already has BackendTLSPolicy e2e-drill/"+svc+"-first"):
			outcomes["denied: Conflicted"]++
		default:
			outcomes["other: "+err.Error()]++
		}
	}
	require.False(t, after.IsZero(), "%s did not finish in 3 minutes", during)
	t.Logf("outcomes during %s: %v", during, outcomes)
	require.Empty(t, admitted, "a conflicting policy was admitted")
	require.Equal(t, []string{"denied: Conflicted"}, slices.Collect(maps.Keys(outcomes)), "every review answered and every conflict denied")
}

// TestDisruptionBudgetKeepsOneReplica evicts both replicas at once, as a node drain does: the
// PodDisruptionBudget (minAvailable 1) admits the first eviction and refuses the second until
// a replacement is ready. (Topology spread is ScheduleAnyway: on this one node both replicas
// share it, as documented.)
func TestDisruptionBudgetKeepsOneReplica(t *testing.T) {
	_, cs := deployed(t)
	ctx := context.Background()
	// The disruption controller counts the healthy replicas a moment after they turn ready.
	eventuallyWithin(t, 30*time.Second, func() error {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "policyattachment-webhook", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.DisruptionsAllowed != 1 {
			return fmt.Errorf("%d disruptions allowed, want 1", pdb.Status.DisruptionsAllowed)
		}
		return nil
	})
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	require.Len(t, pods.Items, 2)
	evict := func(name string) error {
		return cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}
	require.NoError(t, evict(pods.Items[0].Name), "the first eviction")
	err = evict(pods.Items[1].Name)
	require.Error(t, err, "the second eviction, with the first replica gone")
	assert.True(t, apierrors.IsTooManyRequests(err), "refused by the disruption budget: %v", err)
	waitReady(t, cs, ns, 2, 90*time.Second)
}

// withDeploymentArgs rolls the Deployment out with extra args for the webhook container, and
// back when the test ends. Either way it waits until only replicas of the new template are
// left: a terminating replica still answers reviews during --shutdown-delay.
func withDeploymentArgs(t *testing.T, args ...string) {
	t.Helper()
	_, cs := deployed(t)
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "policyattachment-webhook", metav1.GetOptions{})
	require.NoError(t, err)
	original := slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
	rollOut(t, cs, append(slices.Clone(original), args...))
	t.Cleanup(func() { rollOut(t, cs, original) })
}

func rollOut(t *testing.T, cs kubernetes.Interface, args []string) {
	t.Helper()
	rollOutWith(t, cs, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = args })
}

// rollOutWith edits the webhook's Deployment with edit, updates it, and waits until only
// replicas of the new template are left, ready.
func rollOutWith(t *testing.T, cs kubernetes.Interface, edit func(*appsv1.Deployment)) {
	t.Helper()
	ctx := context.Background()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "policyattachment-webhook", metav1.GetOptions{})
	require.NoError(t, err)
	edit(d)
	d, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventuallyWithin(t, 3*time.Minute, func() error {
		current, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := current.Status; s.ObservedGeneration < d.Generation || s.UpdatedReplicas != 2 || s.ReadyReplicas != 2 || s.Replicas != 2 {
			return fmt.Errorf("rollout of generation %d: %+v", d.Generation, s)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
		if err != nil {
			return err
		}
		if n := len(pods.Items); n != 2 {
			return fmt.Errorf("%d pods, want 2 (old replicas still terminating)", n)
		}
		return nil
	})
}

// TestMemoryLimitFromTheContainer: in a real Pod, `webhook serve` finds its container's
// memory limit (512 MiB in the shipped Deployment) through its cgroup and gives the Go
// runtime nine tenths of it.
func TestMemoryLimitFromTheContainer(t *testing.T) {
	_, cs := deployed(t)
	logs := webhookLogs(t, cs, ns)
	require.Contains(t, logs, `"msg":"Go soft memory limit set below the container's","bytes":483183820,"fraction":0.9`)
}

// TestFlowSchemaCarriesTheWebhooksRequests: the shipped FlowSchema matches the requests the
// running webhook makes as its ServiceAccount (its lists, watches and live reads), and they
// are dispatched in its own priority level, as the API server's own counters say.
func TestFlowSchemaCarriesTheWebhooksRequests(t *testing.T) {
	_, cs := deployed(t)
	const series = `apiserver_flowcontrol_dispatched_requests_total{flow_schema="policyattachment-webhook",priority_level="policyattachment-webhook"} `
	metrics, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	require.NoError(t, err)
	dispatched := ""
	for _, line := range strings.Split(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			dispatched = v
		}
	}
	require.NotEmpty(t, dispatched, "no request dispatched through the webhook's FlowSchema")
	require.NotEqual(t, "0", dispatched)
}
