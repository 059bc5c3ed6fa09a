package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	automemlimit "github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/policyattachment/webhook/internal/memlimit"
	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/clusterstate"
)

type serveFlags struct {
	host, certDir, configFile, kubeconfig, tlsMin, snapshotFrom string
	profilingAddress, metricsAddress, probeAddress              string
	claimNamespace, reviewMemory, clientCAFile                  string
	clientNames                                                 []string
	port                                                        int
	http2, liveReads, metricsSecure, metricsNamespaceLabel      bool
	auditInterval, reviewTimeout, shutdownDelay, bodyTimeout    time.Duration
	confirmWindow                                               time.Duration
	callerClaimRate                                             float64
	log                                                         logFlags
}

func newServeCommand(s streams, code *int) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--cert-dir DIR] [--port 9443] [--config FILE] [--kubeconfig FILE]",
		Short: "Serve the validating and mutating admission webhooks over HTTPS",
		Long: "Serves the validating and mutating admission webhooks over HTTPS (/validate, /mutate,\n" +
			"/validate-namespaces, and /validate-targets for deletions of Gateways, ListenerSets and\n" +
			"routes: docs/target-deletions.md), its probes (/healthz, /readyz) over plain HTTP on a port of their\n" +
			"own, and its metrics (/metrics) on another, over HTTPS to callers the API server\n" +
			"authenticates and authorizes for get on /metrics. Its view of the cluster comes from\n" +
			"a list and watch of each kind the rules read; it is ready once every kind has been\n" +
			"listed, and it audits the stored policies every --audit-interval. In a container with\n" +
			"a memory limit, and without GOMEMLIMIT, it gives the Go runtime a soft limit of nine\n" +
			"tenths of it; without GOGC, it sets the collector's target to 200 (fewer collections,\n" +
			"a shorter latency tail, more memory).",
		RunE: func(*cobra.Command, []string) error {
			*code = runServe(f, s)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.host, "host", "", "address to listen on (all interfaces when empty)")
	fs.IntVar(&f.port, "port", 9443, "HTTPS port for the reviews (/validate, /mutate, /validate-namespaces, /validate-targets); it answers /healthz and /readyz too, for tools that reach one local process, never /metrics")
	fs.StringVar(&f.metricsAddress, "metrics-bind-address", ":8443", "address of the /metrics endpoint (Prometheus), HTTPS unless --metrics-secure=false; \"0\" turns it off")
	fs.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve /metrics over HTTPS (the certificate of --cert-dir) to callers the API server authenticates (TokenReview of their bearer token) and authorizes (SubjectAccessReview: get on the non-resource URL /metrics; the ClusterRole policyattachment-metrics-reader grants it); false serves them over plain HTTP to whoever reaches the port")
	fs.BoolVar(&f.metricsNamespaceLabel, "metrics-namespace-label", false, "fill the namespace label of policyattachment_reviews_total with the namespace of the object reviewed; off, the label is empty and the metrics carry no names")
	fs.StringVar(&f.probeAddress, "health-probe-bind-address", ":8081", "address of the plain-HTTP /healthz and /readyz endpoints the kubelet probes; \"0\" turns them off")
	fs.StringVar(&f.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "folder holding tls.crt and tls.key; reloaded when they change")
	fs.StringVar(&f.tlsMin, "tls-min-version", "1.3", "minimum TLS version: 1.2 or 1.3")
	fs.BoolVar(&f.http2, "enable-http2", false, "serve HTTP/2 (off by default: CVE-2023-44487)")
	fs.BoolVar(&f.liveReads, "live-reads", true, "when the cache has no other policy at a target, list that kind from the API server first (protects against a policy another replica just admitted; costs a List per such review; safe to turn off with one replica)")
	fs.StringVar(&f.configFile, "config", "", configFlagHelp)
	fs.DurationVar(&f.reviewTimeout, "review-timeout", admission.DefaultReviewTimeout, "per-review deadline; a review that cannot finish in time is refused with a message saying so (keep it below the webhook configurations' timeoutSeconds)")
	fs.DurationVar(&f.shutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long to keep serving while reporting unready, so the API server stops sending reviews before the server closes (keep it below the Pod's terminationGracePeriodSeconds)")
	fs.DurationVar(&f.auditInterval, "audit-interval", 5*time.Minute, "how often to audit the stored policies (findings in the log and the policyattachment_audit_* metrics); 0 turns it off")
	fs.StringVar(&f.snapshotFrom, "snapshot-from", "", "serve a fixed snapshot read from manifests (a file or folder) instead of a cluster: for load tests and demos")
	fs.StringVar(&f.profilingAddress, "profiling-address", "", "serve Go's pprof profiles over plain HTTP on this address (for example 127.0.0.1:6060); off when empty, and never expose it beyond the pod")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to reach the API server (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.claimNamespace, "claim-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the Leases that serialize reviews of policies that could conflict across replicas (default: $POD_NAMESPACE, which the Deployment sets); empty turns claims off, which is safe with one replica only")
	fs.DurationVar(&f.bodyTimeout, "review-body-timeout", admission.DefaultBodyTimeout, "how long a review's body may take to arrive once its headers have; one that stalls or trickles is refused and its connection closed (the API server sends a body at once)")
	fs.StringVar(&f.reviewMemory, "review-memory", "", "memory the reviews in flight may hold between them (a quantity: 96Mi), charged at 18 times each body's size as it is read (what decoding costs); past it a review is refused at once, and the last eighth is kept for bodies up to 64 KiB (every real policy's); default: a quarter of the memory limit (GOMEMLIMIT), or 128Mi without one")
	fs.DurationVar(&f.confirmWindow, "confirm-window", clusterstate.DefaultConfirmWindow, "how long a policy this replica admitted may go without its watch event before the API server is asked whether it stored it; one it did not store (a review that never came through it) is forgotten and its claims given back, so it cannot refuse or delay others' writes past this window (raise it only if other webhooks make the API server store policies later than that)")
	fs.Float64Var(&f.callerClaimRate, "caller-claim-rate", admission.DefaultClaimRate, "while the HTTPS port does not authenticate its callers (no --client-ca-file), the claims (a Lease each) one caller, by source address, may have this replica take per second for policies then not stored (the claims of a policy the API server stores as judged are given back), in bursts of twice that: a review over it waits up to half its deadline, then is refused, so a flood of forged reviews cannot fill etcd with Leases; the API server's reviews come from an address of its own; 0: no bound")
	fs.StringVar(&f.clientCAFile, "client-ca-file", "", "PEM bundle of the CA that signs the API server's client certificate (its AdmissionConfiguration's kubeconfig for this webhook): when set, the HTTPS port answers only callers presenting a certificate it signed, so a review forged straight to a pod is refused at the handshake; read at start")
	fs.StringSliceVar(&f.clientNames, "client-cert-name", nil, "with --client-ca-file, the names (common name or DNS name) a caller's certificate must carry, one of them; empty: any certificate the CA signed")
	f.log.register(fs)
	return cmd
}

func runServe(f serveFlags, s streams) int {
	host, certDir, configFile, kubeconfig, tlsMin, snapshotFrom := f.host, f.certDir, f.configFile, f.kubeconfig, f.tlsMin, f.snapshotFrom
	profilingAddress, port, http2, liveReads := f.profilingAddress, f.port, f.http2, f.liveReads
	auditInterval, reviewTimeout, shutdownDelay := f.auditInterval, f.reviewTimeout, f.shutdownDelay
	stderr := s.err
	versions := map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}
	minVersion, ok := versions[tlsMin]
	if !ok {
		fmt.Fprintf(stderr, "%s: --tls-min-version must be 1.2 or 1.3, not %q\n", progName("serve"), tlsMin)
		return exitBadInput
	}
	if reviewTimeout <= 0 {
		fmt.Fprintf(stderr, "%s: --review-timeout must be positive, not %s\n", progName("serve"), reviewTimeout)
		return exitBadInput
	}
	conf, err := loadConfig(configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	log := f.log.logger(stderr)
	ctrl.SetLogger(log)
	log.Info("starting", "version", buildVersion())
	if f.claimNamespace == "" && snapshotFrom == "" {
		log.Info("claims off (no --claim-namespace): two conflicting policies written at the same instant through two replicas could both be admitted; run one replica, or set it")
	}
	admission.PublishBuildInfo(buildVersion())
	if soft := memlimit.Apply(automemlimit.FromCgroup, os.Getenv); soft > 0 {
		log.Info("Go soft memory limit set below the container's", "bytes", soft, "fraction", memlimit.Fraction)
	}
	synced := memlimit.ApplyGCPercent(os.Getenv)
	if synced != nil {
		log.Info("garbage collector target set (GOGC overrides it)", "percent", memlimit.DefaultGCPercent, "untilSynced", memlimit.SyncGCPercent)
	} else {
		synced = func() {}
	}
	if snapshotFrom != "" && f.metricsSecure && f.metricsAddress != "" && f.metricsAddress != "0" {
		fmt.Fprintf(stderr, "%s: --snapshot-from has no API server to authenticate and authorize the callers of /metrics: "+
			"add --metrics-secure=false to serve them over plain HTTP to anyone, or --metrics-bind-address=0\n", progName("serve"))
		return exitBadInput
	}
	if !f.metricsSecure && f.metricsAddress != "" && f.metricsAddress != "0" {
		log.Info("serving /metrics over plain HTTP to whoever reaches the port (--metrics-secure=false)", "address", f.metricsAddress)
	}
	limits := admission.Limits{BodyTimeout: f.bodyTimeout, Memory: admission.DefaultMemoryBudget()}
	if f.confirmWindow <= 0 {
		fmt.Fprintf(stderr, "%s: --confirm-window must be positive, not %s\n", progName("serve"), f.confirmWindow)
		return exitBadInput
	}
	if f.bodyTimeout <= 0 {
		fmt.Fprintf(stderr, "%s: --review-body-timeout must be positive, not %s\n", progName("serve"), f.bodyTimeout)
		return exitBadInput
	}
	if f.reviewMemory != "" {
		q, err := resource.ParseQuantity(f.reviewMemory)
		if err != nil || q.Value() < 1<<20 {
			fmt.Fprintf(stderr, "%s: --review-memory must be a quantity of at least 1Mi (for example 96Mi), not %q\n", progName("serve"), f.reviewMemory)
			return exitBadInput
		}
		limits.Memory = admission.NewMemoryBudget(q.Value())
	}
	log.Info("review bounds", "bodyTimeout", f.bodyTimeout.String(), "memoryBytes", limits.Memory.Limit())
	clientAuth, err := admission.LoadClientAuth(f.clientCAFile, f.clientNames)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	if f.callerClaimRate < 0 {
		fmt.Fprintf(stderr, "%s: --caller-claim-rate must not be negative, not %g\n", progName("serve"), f.callerClaimRate)
		return exitBadInput
	}
	if clientAuth == nil {
		log.Info("the HTTPS port answers any caller (no --client-ca-file): a review forged straight to a pod is judged like the API server's; see docs/security.md",
			"claimsPerCallerPerSecond", f.callerClaimRate)
		if f.callerClaimRate > 0 {
			limits.ClaimRate = admission.NewClaimRate(f.callerClaimRate)
		}
	}
	if profilingAddress != "" {
		if err := serveProfiles(profilingAddress); err != nil {
			fmt.Fprintf(stderr, "%s: --profiling-address: %v\n", progName("serve"), err)
			return exitBadInput
		}
		log.Info("serving pprof profiles", "address", profilingAddress)
	}
	if snapshotFrom != "" {
		return serveStatic(snapshotFrom, admission.Options{
			Host: host, Port: port, CertDir: certDir, TLSMinVersion: minVersion, EnableHTTP2: http2,
			Table: conf.table, Config: conf.settings, Log: log, ReviewTimeout: reviewTimeout,
			MetricsAddress: f.metricsAddress, ProbeAddress: f.probeAddress, OnSynced: synced,
			InsecureMetrics: !f.metricsSecure, MetricsNamespaceLabel: f.metricsNamespaceLabel,
			Limits: limits, ClientAuth: clientAuth,
		}, stderr)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	srv, err := admission.NewServer(cfg, admission.Options{
		Host: host, Port: port, CertDir: certDir, TLSMinVersion: minVersion, EnableHTTP2: http2,
		Table: conf.table, Config: conf.settings, Log: log, NoLiveReads: !liveReads, AuditInterval: auditInterval,
		ReviewTimeout: reviewTimeout, MetricsAddress: f.metricsAddress, ProbeAddress: f.probeAddress,
		InsecureMetrics: !f.metricsSecure, MetricsNamespaceLabel: f.metricsNamespaceLabel,
		ClaimNamespace: f.claimNamespace, Replica: replicaName(), OnSynced: synced,
		Limits: limits, ClientAuth: clientAuth, ConfirmWindow: f.confirmWindow,
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	// SIGTERM or SIGINT: readiness turns false at once, reviews are still served for
	// --shutdown-delay while the endpoint leaves the Service (the API server would otherwise
	// dial a closed port and, failing closed, refuse the write), then ctx ends and the
	// server finishes in-flight reviews and returns.
	signals := ctrl.SetupSignalHandler()
	serving, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		<-signals.Done()
		srv.Store().SetDraining()
		log.Info("shutting down: unready, still serving", "for", shutdownDelay.String())
		time.Sleep(shutdownDelay)
		stop()
	}()
	ctx := ctrl.LoggerInto(serving, log)
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	return exitOK
}

// serveStatic serves a snapshot built from manifests, as `webhook explain` reads them.
func serveStatic(path string, opts admission.Options, stderr io.Writer) int {
	snap, objects, err := check.StateFromFiles([]string{path}, opts.Table)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	if opts.OnSynced != nil {
		opts.OnSynced()
	}
	// Parsing left garbage many times the snapshot's size; hand it back to the OS now
	// rather than carry it as resident memory for the life of the process.
	debug.FreeOSMemory()
	opts.Log.Info("serving a static snapshot", "from", path, "objects", objects)
	if err := admission.NewStaticServer(snap, opts).Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("serve"), err)
		return exitBadInput
	}
	return exitOK
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}

// replicaName names this process on its claims: the pod's name (POD_NAME, set by the
// Deployment), else the host's.
func replicaName() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
}
