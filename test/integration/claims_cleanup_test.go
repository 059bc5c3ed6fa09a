package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/claims"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/deployrender"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// claimLeases are the claim Leases in the claims' namespace, by name, each with its holder.
func claimLeases(t *testing.T) map[string]string {
	t.Helper()
	return testkit.ClaimLeases(t, coordinationclient.NewForConfigOrDie(cfg).Leases(cluster.ClaimNamespace))
}

// forge posts a forged review to a replica and returns its answer; a client that hangs up
// (timeout) gets nil.
func forge(t *testing.T, hc *http.Client, base, name, service string) *admissionv1.AdmissionResponse {
	resp, err := hc.Post(base+"/validate", "application/json", bytes.NewReader(forgedReview(name, service)))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(body, &review))
	return review.Response
}

// TestForgedFloodLeavesNoLease: more replicas, on a port that does not authenticate its
// callers (the shipped default). Fifty forged reviews at once straight to one replica, each
// for a policy at a Service that does not exist, are all answered and admitted; fifty more
// whose caller hangs up while the API server creates their claims (that replica's Lease
// creates are answered 300 ms late), as an API server that timed out would; then fifty
// more to a replica that holds their caller to 5 claims a second. Right after, the Leases
// they took are there; clusterstate.GivenBackWithin the confirm window (2.25 s) later, none
// is left, and the caller held to its rate had the replica take no more than it allows.
func TestForgedFloodLeavesNoLease(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	table := kinds.BuiltinKindTable()
	flooded, doneFlooded, err := cluster.StartReplicaWith(ctx, table, testLogger(), "replica-flooded", 0, func(o *admission.Options, c *rest.Config) {
		o.Limits.ClaimRate = admission.NewClaimRate(admission.DefaultClaimRate) // as `webhook serve` runs
		c.WrapTransport = slowLeaseCreates
	})
	require.NoError(t, err)
	slow, doneSlow, err := cluster.StartReplicaWith(ctx, table, testLogger(), "replica-slow-caller", 0, func(o *admission.Options, _ *rest.Config) {
		o.Limits.ClaimRate = admission.NewClaimRate(5)
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-doneFlooded)
		assert.NoError(t, <-doneSlow)
	})

	before := claimLeases(t)
	flood := func(base, wave string, timeout func(i int) time.Duration) []*admissionv1.AdmissionResponse {
		answers := make([]*admissionv1.AdmissionResponse, 50)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: timeout(i)}
				answers[i] = forge(t, hc, base, fmt.Sprintf("%s-%d", wave, i), fmt.Sprintf("missing-%s-%d", wave, i))
			})
		}
		wg.Wait()
		return answers
	}

	answered := flood(flooded, "answered", func(int) time.Duration { return 10 * time.Second })
	for i, a := range answered {
		require.NotNil(t, a, "review %d answered", i)
		assert.True(t, a.Allowed, "review %d admitted: %v", i, a.Result)
	}
	afterAnswered := claimLeases(t)
	late := counterValue(t, "policyattachment_claims_taken_late_total")
	hungUp := 0
	for _, a := range flood(flooded, "hung-up", func(int) time.Duration { return leaseCreateAnswered / 3 }) {
		if a == nil {
			hungUp++
		}
	}
	afterHungUp := claimLeases(t)
	require.Eventually(t, func() bool { return counterValue(t, "policyattachment_claims_taken_late_total") > late }, 5*time.Second, 10*time.Millisecond,
		"the API server created Leases for reviews whose caller had hung up")

	start := time.Now()
	limited := flood(slow, "limited", func(int) time.Duration { return 10 * time.Second })
	elapsed := time.Since(start)
	admitted, refused := 0, 0
	for i, a := range limited {
		require.NotNil(t, a, "review %d answered", i)
		if a.Allowed {
			admitted++
			continue
		}
		refused++
		assert.Equal(t, fmt.Sprintf("policy attachment review of BackendTLSPolicy forged/limited-%d: its caller (127.0.0.1) had this replica take more than 5 claims a second (--caller-claim-rate; the review port does not authenticate its callers, see docs/security.md); the write was not checked, so it is refused; retry", i), a.Result.Message)
	}
	// Each admitted review took one claim: at most a full bucket (10) and the rate since.
	assert.LessOrEqual(t, float64(admitted), 10+5*elapsed.Seconds(), "claims taken by the caller held to 5 a second, in %s", elapsed)
	assert.Positive(t, refused)
	rightAfter := claimLeases(t)

	bound := clusterstate.GivenBackWithin(clusterstate.DefaultConfirmWindow)
	time.Sleep(bound)
	after := claimLeases(t)
	t.Logf("claim Leases: %d before; %d after 50 answered forged reviews, %d after 50 more whose caller hung up (%d hung up before the answer); "+
		"the caller held to 5 claims a second: %d admitted, %d refused in %s; %d right after the flood, %d once %s passed",
		len(before), len(afterAnswered), len(afterHungUp), hungUp, admitted, refused, elapsed.Round(time.Millisecond), len(rightAfter), len(after), bound)
	assert.Len(t, testkit.LeasesAdded(before, afterAnswered), 50, "every answered review claimed its Service")
	assert.Empty(t, testkit.LeasesAdded(before, after), "no Lease the flood took outlives %s", bound)
}

// TestRefusedAfterAdmissionLeavesNoLease: a write the webhook admits and the API server then
// refuses (its ResourceQuota admission, which runs after the validating webhooks, as another
// webhook might) is never stored; the claim its review took is held until the replica asks
// the API server, and gone clusterstate.GivenBackWithin the confirm window after the write.
func TestRefusedAfterAdmissionLeavesNoLease(t *testing.T) {
	ctx := context.Background()
	cl, _ := newClient(t)
	namespace(t, cl, "refused-later")
	createDocs(t, cl, `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: refused-later}
spec: {ports: [{name: https, port: 443}]}`, `
apiVersion: v1
kind: ResourceQuota
metadata: {name: no-policies, namespace: refused-later}
spec: {hard: {count/backendtlspolicies.gateway.networking.k8s.io: "0"}}`)
	// No quota controller runs here to compute the quota's status; write it as it would.
	quota := object(t, "apiVersion: v1\nkind: ResourceQuota")
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: "refused-later", Name: "no-policies"}, quota))
	require.NoError(t, unstructured.SetNestedStringMap(quota.Object, map[string]string{"count/backendtlspolicies.gateway.networking.k8s.io": "0"}, "status", "hard"))
	require.NoError(t, unstructured.SetNestedStringMap(quota.Object, map[string]string{"count/backendtlspolicies.gateway.networking.k8s.io": "0"}, "status", "used"))
	require.NoError(t, cl.Status().Update(ctx, quota))
	before := claimLeases(t)
	err := cl.Create(ctx, object(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: refused, namespace: refused-later}
spec:
  targetRefs: [{group: "", kind: Service, name: svc, sectionName: https}]
  validation: {hostname: svc.refused-later.svc, wellKnownCACertificates: System}`))
	written := time.Now()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "quota", "refused by the API server's quota, after the webhook admitted it")
	rightAfter := testkit.LeasesAdded(before, claimLeases(t))
	bound := clusterstate.GivenBackWithin(clusterstate.DefaultConfirmWindow)
	time.Sleep(time.Until(written.Add(bound)))
	left := testkit.LeasesAdded(before, claimLeases(t))
	t.Logf("refused by the API server: %q; claim Leases taken: %v right after, %v once %s passed", err.Error(), rightAfter, left, bound)
	assert.Equal(t, []string{`policyattachment-claim-` + leaseHash("gateway.networking.k8s.io/BackendTLSPolicy /Service/refused-later/svc") + ` held for "refused-later/refused"`}, rightAfter,
		"the webhook admitted it and holds its claim until it learns the API server did not store it")
	assert.Empty(t, left)
}

// leaseHash is the hash in the name of the Lease that claims key.
func leaseHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:10])
}

// leaseCreateAnswered is how long after the API server created a Lease slowLeaseCreates
// hands its answer over.
const leaseCreateAnswered = 300 * time.Millisecond

// slowLeaseCreates holds the answer of each Lease create for leaseCreateAnswered, and drops
// it when the request's context ends meanwhile, as a client that gave up does: the API
// server has created the Lease, the replica never learns so from that answer.
func slowLeaseCreates(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/leases") {
			return resp, err
		}
		select {
		case <-r.Context().Done():
			resp.Body.Close()
			return nil, r.Context().Err()
		case <-time.After(leaseCreateAnswered):
			return resp, nil
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// counterValue reads a counter of the in-process replicas' registry (all of them).
func counterValue(t *testing.T, name string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			sum := 0.0
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestKilledReplicaLeavesNoLease: a replica run as a process, killed (SIGKILL) while it
// holds the claim of a review it admitted, leaves the Lease held; the other replicas' sweep
// deletes it once it expired, since its policy was never stored:
// admission.AbandonedClaimsGoneWithin (21 s) after it was taken, nothing is left.
func TestKilledReplicaLeavesNoLease(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "webhook")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/webhook")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	require.NoError(t, cluster.WriteKubeconfig(kubeconfig))
	port, err := localcluster.FreePort()
	require.NoError(t, err)
	u, err := url.Parse(baseURL)
	require.NoError(t, err)
	cmd := exec.Command(bin, "serve", "--kubeconfig", kubeconfig, "--host", u.Hostname(), "--port", strconv.Itoa(port),
		"--cert-dir", cluster.ServingCertDir(), "--claim-namespace", cluster.ClaimNamespace,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--audit-interval=0")
	cmd.Env = append(os.Environ(), "POD_NAME=replica-killed")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	replica := fmt.Sprintf("https://%s:%d", u.Hostname(), port)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: 10 * time.Second}
	require.NoError(t, localcluster.WaitReady(hc, replica+admission.PathReadyz, 60*time.Second), logs.String())

	before := claimLeases(t)
	answer := forge(t, hc, replica, "killed-mid-claim", "missing-killed")
	require.NotNil(t, answer)
	require.True(t, answer.Allowed)
	taken := time.Now()
	require.NoError(t, cmd.Process.Kill()) // well within the confirm window: the claim is held
	_ = cmd.Wait()
	killed = true
	left := testkit.LeasesAdded(before, claimLeases(t))
	require.Len(t, left, 1, "the killed replica's claim is left held")
	assert.Contains(t, left[0], `held for "forged/killed-mid-claim"`)

	bound := admission.AbandonedClaimsGoneWithin(0, 0)
	time.Sleep(time.Until(taken.Add(bound)))
	after := claimLeases(t)
	t.Logf("claim Leases: %d before; %d with the killed replica's; %d once %s passed since it was taken", len(before), len(before)+1, len(after), bound)
	assert.Empty(t, testkit.LeasesAdded(before, after), "the killed replica's claim is swept within %s", bound)
}

// TestClaimsUnderTheShippedRBAC: what claims ask of the API server (create, get, update and
// delete a Lease, list them for the sweep) the roles the base ships allow the webhook's
// ServiceAccount, in its namespace.
func TestClaimsUnderTheShippedRBAC(t *testing.T) {
	ctx := context.Background()
	cl, _ := newClient(t)
	objs, err := deployrender.Kustomize(filepath.Join("..", "..", "deploy", "base"))
	require.NoError(t, err)
	for _, u := range objs {
		if u.GetAPIVersion() != "rbac.authorization.k8s.io/v1" {
			continue
		}
		switch err := cl.Create(ctx, u); {
		case err == nil:
			// Granted for this test only: the tests after it find the ServiceAccount as it
			// was (flowcontrol_test.go's request as it gets 404, not 200 or 403, once it
			// holds the roles).
			t.Cleanup(func() { assert.NoError(t, cl.Delete(context.Background(), u)) })
		default:
			require.NoError(t, client.IgnoreAlreadyExists(err), "%s %s", u.GetKind(), u.GetName())
		}
	}
	asWebhook := rest.CopyConfig(cfg)
	asWebhook.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:policyattachment-system:policyattachment-webhook",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:policyattachment-system", "system:authenticated"}}
	c := &claims.Claimer{Leases: coordinationclient.NewForConfigOrDie(asWebhook).Leases(cluster.ClaimNamespace), Replica: "as-the-service-account"}
	key := "gateway.networking.k8s.io/BackendTLSPolicy /Service/rbac/svc"
	held := func() []string {
		var out []string
		for _, holder := range claimLeases(t) {
			if holder == "rbac/first" || holder == "rbac/second" || holder == "rbac/third" {
				out = append(out, holder)
			}
		}
		return out
	}
	release, _, err := c.Claim(ctx, "rbac/first", []string{key}, nil)
	require.NoError(t, err, "create")
	assert.Equal(t, []string{"rbac/first"}, held())
	release(false)
	assert.Empty(t, held(), "deleted: nothing was admitted under it")
	release, _, err = c.Claim(ctx, "rbac/second", []string{key}, nil)
	require.NoError(t, err)
	release(true)
	assert.Empty(t, held(), "released: updated")
	release, _, err = c.Claim(ctx, "rbac/third", []string{key}, nil)
	require.NoError(t, err, "get and update: a released claim taken")
	assert.Equal(t, []string{"rbac/third"}, held())
	release(false)
	require.NoError(t, c.Sweep(ctx, nil), "list")
}
