package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

// A replica that starts on a cluster holding more policies of one kind than one page of its
// first list stores every one of them: the list follows its continue tokens, storing each
// page as it comes (pkg/clusterstate/feed.go).
func TestReplicaStartingOnMoreThanOnePageStoresEveryPolicy(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "paged")
	policies := clusterstate.ListPageSize + 1
	for i := 0; i < policies; i++ {
		require.NoError(t, cl.Create(ctx, object(t, fmt.Sprintf(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p-%d, namespace: paged}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r-%d}]
  color: blue`, i, i))))
	}

	certDir := t.TempDir()
	ca, err := certs.NewCA("paged-test-ca", time.Hour)
	require.NoError(t, err)
	certPEM, keyPEM, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, certs.WriteKeyPair(certDir, certPEM, keyPEM))
	port, err := localcluster.FreePort()
	require.NoError(t, err)
	replica, err := admission.NewServer(cfg, admission.Options{Host: "127.0.0.1", Port: port, CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Log: testLogger(), NoLiveReads: true})
	require.NoError(t, err)
	replicaCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- replica.Start(replicaCtx) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-done)
	})

	store := replica.Store()
	require.Eventually(t, store.Ready, 30*time.Second, 20*time.Millisecond, "the replica lists every kind")
	colorPolicy := schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"}
	var missing []string
	for i := 0; i < policies; i++ {
		if name := fmt.Sprintf("p-%d", i); !store.Has(colorPolicy, "paged", name) {
			missing = append(missing, name)
		}
	}
	assert.Empty(t, missing, "every policy of the %d listed is in the replica's store", policies)

	// The cluster read of `webhook audit`, `check --cluster` and `report` pages too (client-go's pager).
	docs, err := clusterstate.ReadCluster(ctx, cfg, kinds.BuiltinKindTable(), io.Discard)
	require.NoError(t, err)
	read := 0
	for _, d := range docs {
		if meta, _ := d.Object["metadata"].(map[string]any); d.Object["kind"] == "ColorPolicy" && meta["namespace"] == "paged" {
			read++
		}
	}
	assert.Equal(t, policies, read, "the cluster read holds every policy")
}
