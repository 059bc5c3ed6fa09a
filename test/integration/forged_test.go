package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// forgedReview is a CREATE review of a BackendTLSPolicy on Service forged/<service>, as an
// attacker inside the cluster would POST it straight to a webhook pod.
func forgedReview(name, service string) []byte {
	return []byte(fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "forged-%[1]s", "operation": "CREATE",
		"kind": {"group": "gateway.networking.k8s.io", "version": "v1", "kind": "BackendTLSPolicy"},
		"resource": {"group": "gateway.networking.k8s.io", "version": "v1", "resource": "backendtlspolicies"},
		"namespace": "forged", "name": %[1]q, "object": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %[1]q, "namespace": "forged"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": %[2]q, "sectionName": "https"}],
		         "validation": {"hostname": "x.forged.svc", "wellKnownCACertificates": "System"}}}}}`, name, service))
}

// claimExists reports whether the Lease of a BackendTLSPolicy claim on Service forged/<service> exists.
func claimExists(t *testing.T, cl client.Client, service string) bool {
	t.Helper()
	sum := sha256.Sum256([]byte("gateway.networking.k8s.io/BackendTLSPolicy /Service/forged/" + service))
	l := &unstructured.Unstructured{}
	l.SetAPIVersion("coordination.k8s.io/v1")
	l.SetKind("Lease")
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: cluster.ClaimNamespace, Name: "policyattachment-claim-" + hex.EncodeToString(sum[:10])}, l)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

// TestForgedReviewsHurtNobody: on a webhook port that does not authenticate its callers, a
// review forged straight to the pod is judged, but what it takes (the reservation in the
// replica's store, the claim across replicas) lasts only until the API server is asked
// whether it stored the policy (clusterstate.DefaultConfirmWindow): a real write at the same
// target right after it is admitted, not refused, and no Lease is left behind.
func TestForgedReviewsHurtNobody(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "forged")
	var services []string
	for i := range 21 {
		services = append(services, fmt.Sprintf("b%d", i))
		createDocs(t, cl, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: b%d, namespace: forged}
spec: {ports: [{name: https, port: 443}]}`, i))
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: 5 * time.Second}
	forge := func(name, service string) {
		resp, err := hc.Post(baseURL+"/validate", "application/json", bytes.NewReader(forgedReview(name, service)))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	// Wait for the Services to reach the webhook's store, so the forged reviews claim them.
	require.Eventually(t, func() bool {
		forge("probe", "b0")
		return claimExists(t, cl, "b0")
	}, 10*time.Second, 50*time.Millisecond)

	forge("ghost", "b0")
	start := time.Now()
	err := cl.Create(context.Background(), object(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: real, namespace: forged}
spec:
  targetRefs: [{group: "", kind: Service, name: b0, sectionName: https}]
  validation: {hostname: b0.forged.svc, wellKnownCACertificates: System}`))
	assert.NoError(t, err, "the real write waits for the forged review's claim at most the confirmation window, and is admitted")
	t.Logf("the real write took %s", time.Since(start))

	// Twenty forged reviews at twenty targets: their Leases are gone once the window passed.
	for _, s := range services[1:] {
		forge("ghost-"+s, s)
	}
	assert.Eventually(t, func() bool {
		for _, s := range services[1:] {
			if claimExists(t, cl, s) {
				return false
			}
		}
		return true
	}, 5*time.Second, 100*time.Millisecond, "no Lease outlives a review the API server never stored")
}
