package integration

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// roundRobin is a TLS reverse proxy in front of the replicas: each review goes to the next
// one, as a Service spreads the API server's requests over a Deployment's pods.
type roundRobin struct {
	*httptest.Server
	backends []*url.URL
	next     atomic.Uint64
	served   atomic.Uint64
}

func newRoundRobin(t *testing.T, backends []string) *roundRobin {
	t.Helper()
	rr := &roundRobin{}
	for _, b := range backends {
		u, err := url.Parse(b)
		require.NoError(t, err)
		rr.backends = append(rr.backends, u)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(rr.backends[rr.next.Add(1)%uint64(len(rr.backends))])
			rr.served.Add(1)
		},
		Transport: &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true},
	}
	rr.Server = httptest.NewUnstartedServer(proxy)
	cert, err := cluster.TLSCertificate()
	require.NoError(t, err)
	rr.Server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	rr.Server.StartTLS()
	t.Cleanup(rr.Server.Close)
	return rr
}

// TestNoConflictAdmittedAcrossReplicas: three replicas, each with a store of its own,
// behind one endpoint that sends each review to the next; pairs of conflicting
// BackendTLSPolicies (a Direct kind: one per Service port) created from two clients at the
// same instant, or 1, 5 and 20 ms apart. No pair is ever admitted twice, and the same holds
// while one replica is killed and started again. REPLICA_PAIRS sets the pairs per spacing
// (25 here; BENCHMARKS.md gives a run of 500).
func TestNoConflictAdmittedAcrossReplicas(t *testing.T) {
	pairs := 25
	if n, err := strconv.Atoi(os.Getenv("REPLICA_PAIRS")); err == nil && n > 0 {
		pairs = n
	}
	ctx := context.Background()
	table := kinds.BuiltinKindTable()
	urls := []string{baseURL}
	stops := make([]context.CancelFunc, 3)
	ports := make([]int, 3)
	dones := make([]<-chan error, 3)
	start := func(i int) {
		replicaCtx, stop := context.WithCancel(ctx)
		u, done, err := cluster.StartReplica(replicaCtx, table, testLogger(), fmt.Sprintf("replica-%d", i), ports[i])
		require.NoError(t, err)
		stops[i], dones[i] = stop, done
		if ports[i] == 0 {
			parsed, err := url.Parse(u)
			require.NoError(t, err)
			ports[i], err = strconv.Atoi(parsed.Port())
			require.NoError(t, err)
			urls = append(urls, u)
		}
	}
	for i := 1; i <= 2; i++ {
		start(i)
	}
	t.Cleanup(func() {
		for i := 1; i <= 2; i++ {
			stops[i]()
			assert.NoError(t, <-dones[i])
		}
	})
	rr := newRoundRobin(t, urls)
	restore, err := cluster.SetWebhookURL(rr.URL)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, restore()) })

	cl, _ := newClient(t)
	other, _ := newClient(t)
	namespace(t, cl, "across-replicas")
	require.Eventually(t, func() bool {
		_ = cl.Create(ctx, btlsFor(t, "probe", "nowhere"), client.DryRunAll)
		return rr.served.Load() > 0
	}, 10*time.Second, 50*time.Millisecond, "the API server calls the proxy")

	type outcome struct{ both, one, none int }
	run := func(label string, spacing time.Duration, during func(i int)) outcome {
		var o outcome
		for i := 0; i < pairs; i++ {
			svc := fmt.Sprintf("%s-%d", label, i)
			createDocs(t, cl, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: across-replicas}
spec: {clusterIP: None, ports: [{name: https, port: 443}]}`, svc)) // headless: no service IP, whatever the pairs
			if during != nil {
				during(i)
			}
			var wg sync.WaitGroup
			var admitted atomic.Int32
			go_ := make(chan struct{})
			for j, c := range []client.Client{cl, other} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-go_
					if j == 1 {
						time.Sleep(spacing)
					}
					if c.Create(ctx, btlsFor(t, fmt.Sprintf("p%d-%s", j, svc), svc)) == nil {
						admitted.Add(1)
					}
				}()
			}
			close(go_)
			wg.Wait()
			switch admitted.Load() {
			case 2:
				o.both++
			case 1:
				o.one++
			default:
				o.none++
			}
		}
		t.Logf("%s: %d pairs, spacing %s: both admitted %d, one %d, none %d", label, pairs, spacing, o.both, o.one, o.none)
		return o
	}
	for _, spacing := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		o := run(fmt.Sprintf("s%d", spacing.Milliseconds()), spacing, nil)
		assert.Zero(t, o.both, "pairs both admitted, %s apart", spacing)
		assert.Equal(t, pairs, o.one, "one of each pair admitted, %s apart", spacing)
	}
	// One replica killed a third of the way through and started again two thirds in: its
	// reviews fail meanwhile (the API server's call fails, and validation fails closed),
	// none is admitted twice.
	o := run("restart", 0, func(i int) {
		switch i {
		case pairs / 3:
			stops[1]()
			require.NoError(t, <-dones[1])
		case 2 * pairs / 3:
			start(1)
		}
	})
	assert.Zero(t, o.both, "pairs both admitted while a replica restarts")
}

// btlsFor is a BackendTLSPolicy on a Service's https port.
func btlsFor(t *testing.T, name, service string) *unstructured.Unstructured {
	return object(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: across-replicas}
spec:
  targetRefs: [{group: "", kind: Service, name: %s, sectionName: https}]
  validation: {hostname: %s.across-replicas.svc, wellKnownCACertificates: System}`, name, service, service))
}

// TestClaimsTakenOverAndRefused: a claim left by a replica that died (expired) is taken over
// and the write judged; a claim another policy holds for longer than the review's deadline
// refuses the write in the webhook's words, naming that policy; a dry run claims nothing.
func TestClaimsTakenOverAndRefused(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "claims")
	createDocs(t, cl, `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: claims}
spec: {ports: [{name: https, port: 443}]}`)
	policy := func(name string) *unstructured.Unstructured {
		return object(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: claims}
spec:
  targetRefs: [{group: "", kind: Service, name: svc, sectionName: https}]
  validation: {hostname: svc.claims.svc, wellKnownCACertificates: System}`, name))
	}
	// The Lease a review of a BackendTLSPolicy on Service claims/svc claims.
	key := "gateway.networking.k8s.io/BackendTLSPolicy /Service/claims/svc"
	sum := sha256.Sum256([]byte(key))
	lease := func(holder string, renewed time.Time) *unstructured.Unstructured {
		return object(t, fmt.Sprintf(`
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: policyattachment-claim-%s, namespace: policyattachment-system, labels: {policyattachment.io/claim: "true"}}
spec: {holderIdentity: %q, leaseDurationSeconds: 10, renewTime: %q}`, hex.EncodeToString(sum[:10]), holder, renewed.UTC().Format("2006-01-02T15:04:05.000000Z")))
	}

	held := lease("claims/elsewhere", time.Now())
	require.NoError(t, cl.Create(ctx, held))
	require.NoError(t, cl.Create(ctx, policy("dry"), client.DryRunAll), "a dry run claims nothing, so it does not wait")
	err := cl.Create(ctx, policy("busy"))
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: policy attachment review of BackendTLSPolicy claims/busy waited for BackendTLSPolicy claims/elsewhere, being admitted at the same attachment point, which was neither stored nor given up within 3s (--review-timeout): the write was not checked, so it is refused; retry`, denial(err))

	require.NoError(t, cl.Delete(ctx, held))
	require.NoError(t, cl.Create(ctx, lease("claims/died", time.Now().Add(-time.Minute))))
	require.NoError(t, cl.Create(ctx, policy("after-expiry")), "an expired claim is taken over")
	err = cl.Create(ctx, policy("second"))
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: BackendTLSPolicy.gateway.networking.k8s.io "second" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service claims/svc section https already has BackendTLSPolicy claims/after-expiry; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, denial(err))

	// A replica that stored its policy and never released the claim (its watch of the kind
	// not running): the next review sees the policy stored and takes the claim over.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := object(t, "apiVersion: coordination.k8s.io/v1\nkind: Lease")
		if err := cl.Get(ctx, client.ObjectKey{Namespace: "policyattachment-system", Name: held.GetName()}, current); err != nil {
			return err
		}
		require.NoError(t, unstructured.SetNestedField(current.Object, "claims/after-expiry", "spec", "holderIdentity"))
		require.NoError(t, unstructured.SetNestedField(current.Object, time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), "spec", "renewTime"))
		return cl.Update(ctx, current) // the denied review's release may update it meanwhile
	}))
	err = cl.Create(ctx, policy("third"))
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: BackendTLSPolicy.gateway.networking.k8s.io "third" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service claims/svc section https already has BackendTLSPolicy claims/after-expiry; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, denial(err))
}
