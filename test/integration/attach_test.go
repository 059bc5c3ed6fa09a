package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

// TestAttachToAnExistingCluster is `make run CLUSTER=current` against a second, separate
// API server: the webhook registers itself by URL, judges, and on stop removes its
// configurations, after which the cluster accepts policy writes without it.
func TestAttachToAnExistingCluster(t *testing.T) {
	other := &envtest.Environment{}
	otherCfg, err := other.Start()
	require.NoError(t, err)
	defer func() { _ = other.Stop() }()

	port, err := localcluster.FreePort()
	require.NoError(t, err)

	attached, err := localcluster.Attach(otherCfg, "127.0.0.1", port, t.TempDir(), filepath.Join("..", "crds"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done, err := attached.StartWebhook(ctx, kinds.BuiltinKindTable(), testLogger())
	require.NoError(t, err)

	cl, err := client.New(otherCfg, client.Options{Scheme: runtime.NewScheme()})
	require.NoError(t, err)
	bad := `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: bad, namespace: default}
spec: {targetRefs: [{group: "", kind: Service, name: b1}], color: red}`
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ColorPolicy.policies.controller.io "bad" is invalid: spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`,
		denial(cl.Create(ctx, object(t, bad))))

	cancel()
	require.NoError(t, <-done)
	require.NoError(t, attached.Stop())
	assert.NoError(t, cl.Create(context.Background(), object(t, bad)), "detached: the cluster no longer calls the webhook")
}
