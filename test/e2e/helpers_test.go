//go:build e2e

// Package e2e runs against whatever KUBECONFIG points at: the local control plane of
// `make e2e`, or a kind cluster with the webhook deployed (`make e2e-kind`). It applies the
// manifests in testdata/ with a real client and asserts exactly what kubectl would print.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

const denied = `admission webhook "validate.policyattachment.io" denied the request: `

var cfg *rest.Config

func TestMain(m *testing.M) {
	// controller-runtime's clients log nothing the suite reads; without a logger they print
	// a stack trace instead.
	ctrl.SetLogger(logr.Discard())
	var err error
	if cfg, err = ctrl.GetConfig(); err != nil {
		fmt.Println("e2e: no cluster:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func newClient(t *testing.T) (client.Client, *testkit.Warnings) {
	t.Helper()
	return testkit.NewClient(t, cfg)
}

// load reads the objects of a testdata file, in order.
func load(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := manifests.Read([]string{filepath.Join("testdata", name)}, nil, manifests.Options{})
	require.NoError(t, err)
	out := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		out = append(out, &unstructured.Unstructured{Object: d.Object})
	}
	return out
}

// apply creates objects that may already exist (shared fixtures).
func apply(t *testing.T, cl client.Client, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		err := cl.Create(context.Background(), o.DeepCopy())
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			require.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
		}
	}
}

// createDocs creates the objects written as YAML documents, in order.
func createDocs(t *testing.T, cl client.Client, docs ...string) {
	t.Helper()
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
		require.NoError(t, cl.Create(context.Background(), u), doc)
	}
}

// eventually retries fn until it returns nil or 20s pass: the webhook's informers see new
// objects a moment after the API server stores them.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = fn(); last == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, last)
}

// createErr returns the text after "Error from server ...: " or "<created>".
func createErr(cl client.Client, obj *unstructured.Unstructured, opts ...client.CreateOption) string {
	if err := cl.Create(context.Background(), obj.DeepCopy(), opts...); err != nil {
		return err.Error()
	}
	return "<created>"
}

// expectDenied waits until a dry run gives want, then checks a real create does too.
func expectDenied(t *testing.T, cl client.Client, obj *unstructured.Unstructured, want string) {
	t.Helper()
	eventually(t, "dry run of "+obj.GetName(), func() error {
		if got := createErr(cl, obj, client.DryRunAll); got != want {
			return fmt.Errorf("got %s", got)
		}
		return nil
	})
	got := createErr(cl, obj)
	require.Equal(t, want, got)
	// The whole text as the client received it, for the record (-v prints it).
	t.Logf("%s %s: %s", obj.GetKind(), obj.GetName(), got)
}

// webhook stops, kills or starts the webhook: through the local harness's control
// endpoint, or by scaling the Deployment (deleting its pods, for kill) in a real cluster.
func webhook(t *testing.T, action string) {
	t.Helper()
	if url := os.Getenv("E2E_WEBHOOK_CONTROL"); url != "" {
		resp, err := http.Post(url+"/"+action, "text/plain", nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return
	}
	cl, _ := newClient(t)
	if action == "kill" {
		// As when nodes die: every pod gone at once, no graceful shutdown.
		pods := &unstructured.UnstructuredList{}
		pods.SetAPIVersion("v1")
		pods.SetKind("PodList")
		require.NoError(t, cl.List(context.Background(), pods, client.InNamespace("policyattachment-system"),
			client.MatchingLabels{"app.kubernetes.io/name": "policyattachment-webhook"}))
		for i := range pods.Items {
			require.NoError(t, client.IgnoreNotFound(cl.Delete(context.Background(), &pods.Items[i], client.GracePeriodSeconds(0))))
		}
		return
	}
	replicas := 2
	if action == "stop" {
		replicas = 0
	}
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	key := types.NamespacedName{Namespace: "policyattachment-system", Name: "policyattachment-webhook"}
	require.NoError(t, cl.Get(context.Background(), key, d))
	require.NoError(t, unstructured.SetNestedField(d.Object, int64(replicas), "spec", "replicas"))
	require.NoError(t, cl.Update(context.Background(), d))
	eventually(t, "Deployment "+action, func() error {
		require.NoError(t, cl.Get(context.Background(), key, d))
		ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		if int(ready) != replicas {
			return fmt.Errorf("%d ready, want %d", ready, replicas)
		}
		if replicas > 0 {
			return nil
		}
		// Stopped means gone: a terminating replica still answers reviews for a few
		// seconds (--shutdown-delay), and the API server still knows its address.
		pods := &unstructured.UnstructuredList{}
		pods.SetAPIVersion("v1")
		pods.SetKind("PodList")
		require.NoError(t, cl.List(context.Background(), pods, client.InNamespace("policyattachment-system"),
			client.MatchingLabels{"app.kubernetes.io/name": "policyattachment-webhook"}))
		if n := len(pods.Items); n > 0 {
			return fmt.Errorf("%d pods still there", n)
		}
		return nil
	})
}

// restartWebhookWith restarts the webhook with extra flags, and with its own flags again
// when the test ends: the local harness's process, or the Deployment's container args (a
// rollout, waited for until no replica with the other flags is left).
func restartWebhookWith(t *testing.T, flags ...string) {
	t.Helper()
	url := os.Getenv("E2E_WEBHOOK_CONTROL")
	if url == "" {
		withDeploymentArgs(t, flags...)
		return
	}
	webhook(t, "stop")
	q := neturl.Values{"arg": flags}
	resp, err := http.Post(url+"/start?"+q.Encode(), "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Cleanup(func() {
		webhook(t, "stop")
		webhook(t, "start")
	})
}
