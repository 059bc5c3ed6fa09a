package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

// claimNamespace is where the replicas of the shipped configuration keep their claims.
const claimNamespace = "compare-claims"

// serveRoundRobin answers on 127.0.0.1:port, with the serving certificate in certDir, by
// sending each review to the next of backends (https URLs the cluster's CA vouches for),
// as a Service spreads the API server's requests over a Deployment's pods; connections to
// the backends are kept alive, as the API server keeps its own. It returns a function that
// stops it.
func serveRoundRobin(port int, certDir string, trust *tls.Config, backends []string) (func(), error) {
	var targets []*url.URL
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return nil, err
		}
		targets = append(targets, u)
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[next.Add(1)%uint64(len(targets))])
		},
		Transport: &http.Transport{TLSClientConfig: trust.Clone(), MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute},
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return nil, err
	}
	var l net.Listener
	// The port may be the one just stopped: wait for it to be free.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l, err = tls.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, NextProtos: []string{"http/1.1"}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, err
		}
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: proxy}
	go func() { _ = srv.Serve(l) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// replicaSet is two in-process webhook replicas, each with a store and watches of its own,
// behind a round-robin proxy on the port the webhook configurations name.
type replicaSet struct {
	stopProxy func()
	cancel    context.CancelFunc
	dones     []<-chan error
}

// startReplicas starts two replicas with the cluster's current options (ClaimNamespace,
// NoLiveReads) and the proxy in front of them on port.
func startReplicas(ctx context.Context, attached *localcluster.Cluster, port int, certDir string) (*replicaSet, error) {
	if attached.ClaimNamespace != "" {
		cl, err := client.New(attached.Config, client.Options{})
		if err != nil {
			return nil, err
		}
		if err := cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+attached.ClaimNamespace+"}")); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	rs := &replicaSet{cancel: cancel}
	var urls []string
	for i := 1; i <= 2; i++ {
		u, done, err := attached.StartReplica(rctx, kinds.BuiltinKindTable(), logr.Discard(), fmt.Sprintf("compare-replica-%d", i), 0)
		if done != nil {
			rs.dones = append(rs.dones, done)
		}
		if err != nil {
			rs.stop()
			return nil, err
		}
		urls = append(urls, u)
	}
	stop, err := serveRoundRobin(port, certDir, attached.TLS, urls)
	if err != nil {
		rs.stop()
		return nil, err
	}
	rs.stopProxy = stop
	return rs, nil
}

func (rs *replicaSet) stop() {
	if rs.stopProxy != nil {
		rs.stopProxy()
	}
	rs.cancel()
	for _, d := range rs.dones {
		<-d
	}
}

// serveNoopPair is two no-op servers answering patch behind the round-robin proxy on port:
// the floor of the replicated configuration, the proxy's hop included.
func serveNoopPair(port int, certDir string, trust *tls.Config, patch []byte) (func(), error) {
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	var urls []string
	for range 2 {
		p, err := localcluster.FreePort()
		if err != nil {
			stopAll()
			return nil, err
		}
		stop, err := serveNoop(p, certDir, patch)
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, stop)
		urls = append(urls, "https://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	stop, err := serveRoundRobin(port, certDir, trust, urls)
	if err != nil {
		stopAll()
		return nil, err
	}
	return func() { stop(); stopAll() }, nil
}

// pairOutcome is what a run of conflicting pairs gave.
type pairOutcome struct {
	latencies        []time.Duration // every create, admitted or denied, sorted
	both, one, none  int
	firstErr         error // a create that failed other than by a denial
	readWaitDescribe string
}

// pairs creates n pairs of conflicting BackendTLSPolicies (a Direct kind: one per Service
// port) from two clients, the second spacing after the first, each pair on a headless
// Service of its own,
// created just before the pair (precreate false: an unrelated write before each pair, as in
// test/integration's TestNoConflictAdmittedAcrossReplicas) or all of them before the first
// pair (precreate true).
func pairs(ctx context.Context, cl, other client.Client, ns string, n int, precreate bool, spacing time.Duration) (pairOutcome, error) {
	var o pairOutcome
	if err := cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}")); err != nil && !apierrors.IsAlreadyExists(err) {
		return o, err
	}
	service := func(i int) error {
		return cl.Create(ctx, object(fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: svc-%d, namespace: %s}
spec: {clusterIP: None, ports: [{name: https, port: 443}]}`, i, ns)))
	}
	if precreate {
		for i := range n {
			if err := service(i); err != nil {
				return o, err
			}
		}
	}
	var mu sync.Mutex
	for i := range n {
		if !precreate {
			if err := service(i); err != nil {
				return o, err
			}
		}
		var wg sync.WaitGroup
		var admitted atomic.Int32
		start := make(chan struct{})
		for j, c := range []client.Client{cl, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if j == 1 {
					time.Sleep(spacing)
				}
				t0 := time.Now()
				err := c.Create(ctx, backendTLS(ns, fmt.Sprintf("p%d-svc-%d", j, i), fmt.Sprintf("svc-%d", i)))
				took := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				o.latencies = append(o.latencies, took)
				switch {
				case err == nil:
					admitted.Add(1)
				case !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && o.firstErr == nil:
					o.firstErr = err
				}
			}()
		}
		close(start)
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
	sort.Slice(o.latencies, func(i, j int) bool { return o.latencies[i] < o.latencies[j] })
	return o, nil
}

func backendTLS(ns, name, service string) client.Object {
	return object(fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: %s}
spec:
  targetRefs: [{group: "", kind: Service, name: %s, sectionName: https}]
  validation: {hostname: %s.%s.svc, wellKnownCACertificates: System}`, name, ns, service, service, ns))
}

// waitAnswered waits until the webhook answers a dry run of a BackendTLSPolicy in ns (the
// mutating webhook's annotation is on what the API server returns): the API server calls it.
func waitAnswered(ctx context.Context, cl client.Client, ns string) error {
	_ = cl.Create(ctx, object("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}"))
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		probe := backendTLS(ns, "probe", "nowhere")
		if err := cl.Create(ctx, probe, client.DryRunAll); err == nil && probe.GetAnnotations()[impact.AnnotationImpact] != "" {
			return nil
		}
	}
	return fmt.Errorf("the webhook did not answer a dry run in %s within 30s", ns)
}
