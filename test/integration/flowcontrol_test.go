package integration

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/test/harness/deployrender"
)

// TestFlowSchemaClassifiesTheWebhook: with the base's FlowSchema and priority level applied,
// the API server puts the webhook's ServiceAccount's requests in the webhook's own priority
// level (the API server names the FlowSchema and level it chose in each response's headers),
// and another ServiceAccount's requests stay in the built-in service-accounts schema.
func TestFlowSchemaClassifiesTheWebhook(t *testing.T) {
	ctx := context.Background()
	cl, _ := newClient(t)
	objs, err := deployrender.Kustomize(filepath.Join("..", "..", "deploy", "base"))
	require.NoError(t, err)
	uids := map[string]string{}
	for _, u := range objs {
		if u.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1" {
			continue
		}
		require.NoError(t, client.IgnoreAlreadyExists(cl.Create(ctx, u)), u.GetKind())
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(u.GroupVersionKind())
		require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(u), stored))
		uids[u.GetKind()] = string(stored.GetUID())
	}
	require.Len(t, uids, 2, "the base ships a FlowSchema and a PriorityLevelConfiguration")
	builtin := &unstructured.Unstructured{}
	builtin.SetAPIVersion("flowcontrol.apiserver.k8s.io/v1")
	builtin.SetKind("FlowSchema")
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "service-accounts"}, builtin))

	classify := func(user string) (flowSchema, priorityLevel string) {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user}
		hc, err := rest.HTTPClientFor(c)
		require.NoError(t, err)
		resp, err := hc.Get(c.Host + "/apis/gateway.networking.k8s.io/v1/httproutes?limit=1")
		require.NoError(t, err)
		resp.Body.Close()
		// Classified before authorization: a refused request says where it went too.
		require.Contains(t, []int{http.StatusOK, http.StatusForbidden}, resp.StatusCode)
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
	}
	// The API server's configuration controller takes up new schemas within seconds.
	var fs, pl string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if fs, pl = classify("system:serviceaccount:policyattachment-system:policyattachment-webhook"); fs == uids["FlowSchema"] {
			break
		}
	}
	require.Equal(t, uids["FlowSchema"], fs, "the webhook's requests are matched by its FlowSchema")
	require.Equal(t, uids["PriorityLevelConfiguration"], pl, "and run in its priority level")
	other, _ := classify("system:serviceaccount:default:some-operator")
	require.Equal(t, string(builtin.GetUID()), other, "another ServiceAccount stays in service-accounts")
}
