package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/check"
)

// TestTargetlessLabelledCRDIsNotJudged installs, while the webhook runs, a CRD labelled as a
// Direct policy kind whose schema has no target field (agentgateway's AgentgatewayParameters
// at 75b4e6ce is one: a parameters kind), with its resource in the webhook configuration:
// its objects attach to nothing, so they are admitted unjudged (by the label alone, every
// one was denied for naming no target). `check --cluster` reads the cluster's CRDs the same
// way. A labelled kind installed after it, which can name targets, is judged: once it is,
// the webhook has read the first CRD too.
func TestTargetlessLabelledCRDIsNotJudged(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "params")
	require.NoError(t, cl.Create(ctx, object(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gatewayparameters.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: GatewayParameters, listKind: GatewayParametersList, plural: gatewayparameters, singular: gatewayparameters}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              image: {type: string}`)))
	addResourceToWebhook(t, cl, "example.com", "gatewayparameters")
	installPolicyCRD(t, cl, "ProbePolicy", "probepolicies", "Namespaced", "Direct")

	probe := object(t, `
apiVersion: example.com/v1
kind: ProbePolicy
metadata: {name: nowhere, namespace: params}
spec: {interval: 5s}`)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err := cl.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		assert.ErrorContains(c, err, "InvalidTargetRef")
	}, 20*time.Second, 100*time.Millisecond)

	const params = `
apiVersion: example.com/v1
kind: GatewayParameters
metadata: {name: proxy, namespace: params}
spec: {image: "proxy:v1"}`
	// Eventually: the API server serves the kind once its CRD is established.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NoError(c, cl.Create(ctx, object(t, params)))
	}, 20*time.Second, 100*time.Millisecond)

	file := filepath.Join(t.TempDir(), "params.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(params, "name: proxy", "name: proxy-2", 1)), 0o600))
	code, out, errOut := webhookCLI(t)("check", "--cluster", "-f", file, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Empty(t, report.Results, "no policy to judge")
	assert.Equal(t, check.Summary{}, report.Summary)
}
