package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckDiffOnTheLiveCluster: the GitOps example of docs/gitops-diff.md against a real
// API server. The objects of cmd/webhook/testdata/check/diff/cluster.yaml are stored
// through the webhook (the ReferenceGrant shop/on-gw needed is deleted afterwards; the two
// cart policies are admitted while their route does not exist), then `check --cluster
// --diff -f pr.yaml` must print exactly want.txt (want.json with -o json), the output
// `--base cluster.yaml` prints offline (cmd/webhook's TestCheckDiff), and exit 1: it
// introduces findings. Unusable input is exit 2.
func TestCheckDiffOnTheLiveCluster(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "cmd", "webhook", "testdata", "check", "diff"))
	require.NoError(t, err)
	stored, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(dir, "want.txt"))
	require.NoError(t, err)
	wantJSON, err := os.ReadFile(filepath.Join(dir, "want.json"))
	require.NoError(t, err)

	cl, _ := newClient(t)
	grant := object(t, `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: shop-colors, namespace: gw-system}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: shop}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`)
	for i, doc := range strings.Split(string(stored), "\n---\n") {
		if i == 2 { // after the namespaces: the grant that admits shop/on-gw
			require.NoError(t, cl.Create(context.Background(), grant))
		}
		createDocs(t, cl, doc)
	}
	require.NoError(t, cl.Delete(context.Background(), grant))

	run := webhookCLIIn(t, dir)
	start := time.Now()
	code, out, errOut := run("check", "--cluster", "--diff", "-f", "pr.yaml")
	t.Logf("check --cluster --diff took %s", time.Since(start))
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, string(want), out)

	code, out, errOut = run("check", "--cluster", "--diff", "-f", "pr.yaml", "-o", "json")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, string(wantJSON), out, "the JSON --base cluster.yaml prints offline (want.json)")

	code, out, errOut = run("check", "--diff", "-f", "pr.yaml")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "webhook check: --diff needs the state to compare with: --cluster (the live cluster) or --base PATH (manifests of the state before)\n", errOut)
}
