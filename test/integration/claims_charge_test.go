package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/rest"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestStoredWritesCostTheirCallerNothing: --caller-claim-rate charges only the claims of
// policies that are not stored. The API server's reviews reach a replica that holds each
// caller to 0.1 claims a second (a bucket of 0.2: one claim, then ten seconds of debt); twelve
// policies written through it one after another are all admitted, since each claim is given
// back once the watch shows the policy stored as judged. Then reviews forged straight to
// another replica, each naming one of those stored policies with another target, are
// admitted, and their claims deleted once the API server is asked and stores the policy with
// other targets: clusterstate.GivenBackWithin later, only the real policies' Leases are new.
func TestStoredWritesCostTheirCallerNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	table := kinds.BuiltinKindTable()
	strict, doneStrict, err := cluster.StartReplicaWith(ctx, table, testLogger(), "replica-strict", 0, func(o *admission.Options, _ *rest.Config) {
		o.Limits.ClaimRate = admission.NewClaimRate(0.1)
	})
	require.NoError(t, err)
	forgedTo, doneForged, err := cluster.StartReplicaWith(ctx, table, testLogger(), "replica-forged-to", 0, func(o *admission.Options, _ *rest.Config) {
		o.Limits.ClaimRate = admission.NewClaimRate(admission.DefaultClaimRate)
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-doneStrict)
		assert.NoError(t, <-doneForged)
	})
	restore, err := cluster.SetWebhookURL(strict)
	require.NoError(t, err)
	restored := false
	t.Cleanup(func() {
		if !restored {
			assert.NoError(t, restore())
		}
	})

	cl, _ := newClient(t)
	namespace(t, cl, "stored-writes")
	before := claimLeases(t)
	for i := range 12 {
		err := cl.Create(context.Background(), object(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: stored-%d, namespace: stored-writes}
spec:
  targetRefs: [{group: "", kind: Service, name: svc-%d, sectionName: https}]
  validation: {hostname: svc.stored-writes.svc, wellKnownCACertificates: System}`, i, i)))
		require.NoError(t, err, "write %d through the API server", i)
		time.Sleep(200 * time.Millisecond) // far less than the ten seconds the rate would refill a claim in
	}
	require.NoError(t, restore())
	restored = true

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cluster.TLS}, Timeout: 10 * time.Second}
	for i := range 12 {
		resp, err := hc.Post(forgedTo+"/validate", "application/json", bytes.NewReader(forgedReviewIn("stored-writes", fmt.Sprint("stored-", i), fmt.Sprint("elsewhere-", i))))
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		var review admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(body, &review))
		assert.True(t, review.Response.Allowed, "forged review %d: %v", i, review.Response.Result)
	}
	rightAfter := len(testkit.LeasesAdded(before, claimLeases(t)))
	bound := clusterstate.GivenBackWithin(clusterstate.DefaultConfirmWindow)
	time.Sleep(bound)
	var want []string
	for i := range 12 {
		want = append(want, fmt.Sprintf(`policyattachment-claim-%s held for ""`, leaseHash(fmt.Sprintf("gateway.networking.k8s.io/BackendTLSPolicy /Service/stored-writes/svc-%d", i))))
	}
	slices.Sort(want)
	left := testkit.LeasesAdded(before, claimLeases(t))
	t.Logf("claim Leases: %d new right after 12 writes and 12 forged reviews naming them, %d once %s passed", rightAfter, len(left), bound)
	assert.Equal(t, want, left, "the real writes' claims are kept, released as admitted; the forged ones' are gone")
}

// forgedReviewIn is a forged CREATE review of BackendTLSPolicy namespace/name at Service
// namespace/service.
func forgedReviewIn(namespace, name, service string) []byte {
	return []byte(fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "forged-%[2]s", "operation": "CREATE",
		"kind": {"group": "gateway.networking.k8s.io", "version": "v1", "kind": "BackendTLSPolicy"},
		"resource": {"group": "gateway.networking.k8s.io", "version": "v1", "resource": "backendtlspolicies"},
		"namespace": %[1]q, "name": %[2]q, "object": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %[2]q, "namespace": %[1]q},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": %[3]q, "sectionName": "https"}],
		         "validation": {"hostname": "x.forged.svc", "wellKnownCACertificates": "System"}}}}}`, namespace, name, service))
}
