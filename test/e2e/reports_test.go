//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestReportsDeployment runs where the reports component is deployed (make e2e-node adds it
// to the cert-manager overlay): `webhook report`, with the shipped ServiceAccount and RBAC
// only, reads the cluster and writes the namespace's Report, whose result for a route
// policy says it is enforced, and logs each round without an error.
func TestReportsDeployment(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "policyattachment-reports", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Skip("needs the reports component (make e2e-node deploys it with the cert-manager overlay)")
	}
	createDocs(t, cl,
		`{apiVersion: v1, kind: Namespace, metadata: {name: e2e-reports}}`, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: e2e-reports}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: e2e-reports}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: b1, port: 80}]}]}`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: e2e-reports}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: green}`)
	// The first round comes at start: restart the writer rather than wait for its interval.
	require.NoError(t, cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-reports"}))

	want := "Atomic defaults on HTTPRoute e2e-reports/store: enforced on 1 of 1 path"
	eventuallyWithin(t, 3*time.Minute, func() error {
		report := &unstructured.Unstructured{}
		report.SetAPIVersion("openreports.io/v1alpha1")
		report.SetKind("Report")
		if err := cl.Get(ctx, client.ObjectKey{Namespace: "e2e-reports", Name: "policyattachment"}, report); err != nil {
			return err
		}
		results, _, _ := unstructured.NestedSlice(report.Object, "results")
		for _, r := range results {
			if m, _ := r.(map[string]any); m["message"] == want && m["result"] == "pass" {
				return nil
			}
		}
		return fmt.Errorf("no result %q in %v", want, results)
	})
	// The restarted writer's log (an earlier one may have met the drill that takes a verb
	// away from the shipped ClusterRole).
	var logs string
	eventuallyWithin(t, time.Minute, func() error {
		if logs = podLogs(t, cs, "app.kubernetes.io/name=policyattachment-reports"); !strings.Contains(logs, `"reports written"`) {
			return fmt.Errorf("the restarted writer has not logged a round yet: %q", logs)
		}
		return nil
	})
	require.NotContains(t, logs, "failed", "the writer's log:\n%s", logs)
}

// podLogs returns the logs of the pods the selector picks in the webhook's namespace, but
// those being deleted.
func podLogs(t *testing.T, cs kubernetes.Interface, selector string) string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	var b strings.Builder
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background()); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}
