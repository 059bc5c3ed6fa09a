// Command load is `make load`: it writes the synthetic cluster (at -scale 1: 1,000 Gateways,
// 10,000 HTTPRoutes with 10 rules each, 10,000 Services, 5,000 policies; -scale N has N times
// each) as manifests, starts `webhook serve --snapshot-from` on loopback as its own process,
// and drives it over TLS keep-alive connections with a mix of reviews: first closed-loop to
// find saturation, then open-loop at half of it (or -rate) for latency. Then it times the
// offline tools on the same cluster: `webhook audit` and `webhook explain --target` of a
// Gateway. Every phase is bounded in time; it stops by itself.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/synthetic"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "webhook", "bin/webhook", "the webhook binary")
	flag.StringVar(&o.work, "work", filepath.Join(".local", "load"), "working folder")
	flag.IntVar(&o.workers, "workers", 32, "concurrent keep-alive connections")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each phase")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the webhook's CPU profile during the saturation phase to this file")
	flag.StringVar(&o.allocProfile, "allocprofile", "", "write the webhook's allocation profile during the latency phase to this file (go tool pprof -sample_index=alloc_space)")
	flag.StringVar(&o.kubeconfig, "cluster-kubeconfig", "", "with -from-cluster: a cluster that already holds the synthetic cluster at -scale (one a -keep run left), instead of starting and filling one")
	flag.BoolVar(&o.keep, "keep", false, "with -from-cluster: keep the control plane running after the run, until interrupted, for more runs with -cluster-kubeconfig (filling it at -scale 10 took 26 minutes here)")
	flag.Float64Var(&o.writes, "writes", 0, "with -from-cluster: instead of the mix, send this many CREATE reviews of new policies per second, each claiming its conflict key, with live reads on, and count the webhook's requests to the API server per review")
	flag.BoolVar(&o.claims, "claims", true, "with -writes: run the webhook with claims (--claim-namespace default); false counts the reads that stand in for them")
	flag.StringVar(&o.memoryLimit, "memory-limit", "", "run the webhook in a memory cgroup (v1) with this limit in MiB, as a container limit (`webhook serve` then sets its soft limit from it): e.g. 512")
	flag.IntVar(&o.scale, "scale", 1, "size of the synthetic cluster: N times 1,000 Gateways, 10,000 HTTPRoutes, 10,000 Services, 5,000 policies, 100 namespaces")
	flag.BoolVar(&o.tools, "tools", true, "time `webhook audit` and `webhook explain --target` on the cluster after the load")
	flag.BoolVar(&o.fromCluster, "from-cluster", false, "serve the snapshot from a local control plane holding it (list and watch, --live-reads=false) instead of --snapshot-from files")
	flag.Var(&o.webhookEnv, "webhook-env", "`KEY=VALUE` added to the webhook's environment only, not the generator's (repeatable), e.g. GOMAXPROCS=1")
	flag.Float64Var(&o.rate, "rate", 0, "reviews/s of the latency phase (default: half of the measured saturation), to compare runs at one load")
	flag.BoolVar(&o.floor, "floor", false, "drive a TLS server that does no admission work instead of the webhook: the floor of these figures on this machine")
	flag.StringVar(&o.floorShape.heap, "floor-heap", "", "with -floor: keep a heap like the snapshot's in the floor server: `objects` (260,000 small objects with pointers, 28 MiB; objects=N for N of them) or bytes (28 MiB the collector does not scan)")
	flag.IntVar(&o.floorShape.garbage, "floor-garbage", 0, "with -floor: allocate this many 112-byte objects per review (100 is 11 KiB), as the webhook's handlers do")
	flag.DurationVar(&o.floorShape.work, "floor-work", 0, "with -floor: spend this much CPU per review, to tell the tail of CPU from the collector's; calibrate by the runs' \"CPU per review\" lines (here 10us with -floor-garbage 95 matched the webhook)")
	floorCertDir := flag.String("serve-floor", "", "(internal) serve the floor with the certificate in this folder, on -floor-port")
	floorPort := flag.Int("floor-port", 0, "(internal) the floor server's port")
	flag.Parse()
	if _, err := floorHeapObjects(o.floorShape.heap); err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(2)
	}
	if o.writes > 0 && !o.fromCluster {
		fmt.Fprintln(os.Stderr, "load: -writes needs -from-cluster: live reads read the API server")
		os.Exit(2)
	}
	if o.scale < 1 {
		fmt.Fprintf(os.Stderr, "load: -scale %d: want 1 or more\n", o.scale)
		os.Exit(2)
	}
	if *floorCertDir != "" {
		if err := serveFloor(*floorCertDir, *floorPort, o.floorShape, synthetic.At(o.scale)); err != nil {
			fmt.Fprintln(os.Stderr, "load: floor:", err)
			os.Exit(1)
		}
		return
	}
	if o.floor {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		o.bin = self
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// options are the harness's flags.
type options struct {
	bin, work, cpuProfile string
	allocProfile          string
	workers, scale        int
	duration              time.Duration
	fromCluster, floor    bool
	tools, keep, claims   bool
	kubeconfig            string
	memoryLimit           string
	// writes is the CREATE reviews per second of the -writes phase; 0 runs the mix.
	writes     float64
	webhookEnv envFlag
	// rate is the latency phase's reviews/s; 0 means half of the measured saturation.
	rate float64
	// floorShape is what the floor server keeps, allocates and computes (-floor-heap,
	// -floor-garbage, -floor-work).
	floorShape floorShape
}

// envFlag collects repeated KEY=VALUE flags.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }

func (e *envFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

func run(o options) error {
	bin, work, workers, duration, cpuProfile := o.bin, o.work, o.workers, o.duration, o.cpuProfile
	fromCluster, webhookEnv, floor, fixedRate := o.fromCluster, []string(o.webhookEnv), o.floor, o.rate
	size := synthetic.At(o.scale)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	var source, toolSource []string
	switch {
	case floor:
		// The floor serves no snapshot: it answers from the mix alone.
	case fromCluster:
		kubeconfig := o.kubeconfig
		if kubeconfig == "" {
			var stop func()
			var err error
			if kubeconfig, stop, err = populateCluster(work, size); err != nil {
				return err
			}
			if o.keep {
				defer holdUntilInterrupted(kubeconfig, stop)
			} else {
				defer stop()
			}
		}
		// Live reads off for the mix: it replays the same reviews thousands of times a
		// second, and the API server would be what is measured. The -writes phase measures
		// them.
		source = []string{"--kubeconfig", kubeconfig, "--live-reads=false"}
		if o.writes > 0 {
			source = []string{"--kubeconfig", kubeconfig}
			if o.claims {
				source = append(source, "--claim-namespace", "default")
			}
		}
		toolSource = []string{"--kubeconfig", kubeconfig}
	default:
		snapDir := filepath.Join(work, "snapshot")
		fmt.Printf("load: writing the snapshot (%s)...\n", size)
		if err := synthetic.WriteFiles(snapDir, size); err != nil {
			return err
		}
		source = []string{"--snapshot-from", snapDir}
		toolSource = []string{"-f", snapDir}
	}
	ca, err := certs.NewCA("load-ca", time.Hour)
	if err != nil {
		return err
	}
	leaf, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	if err != nil {
		return err
	}
	certDir := filepath.Join(work, "certs")
	if err := certs.WriteKeyPair(certDir, leaf, key); err != nil {
		return err
	}
	port, err := localcluster.FreePort()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(work, "webhook.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	// The probes are read on the HTTPS port here; the metrics on a loopback port of their own,
	// over plain HTTP (--metrics-secure=false: a --snapshot-from serve has no API server to
	// vouch for the reader, and the HTTPS port serves no metrics).
	metricsPort, err := localcluster.FreePort()
	if err != nil {
		return err
	}
	args := append([]string{"serve", "--cert-dir", certDir, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort), "--metrics-secure=false", "--health-probe-bind-address=0"}, source...)
	if floor {
		args = []string{"-serve-floor", certDir, "-floor-port", strconv.Itoa(port),
			"-scale", strconv.Itoa(o.scale), "-floor-heap", o.floorShape.heap, "-floor-garbage", strconv.Itoa(o.floorShape.garbage), "-floor-work", o.floorShape.work.String()}
		fmt.Println("load: the floor: a TLS server that answers each review without admission work, in its own process")
	}
	profilePort := 0
	if cpuProfile != "" || o.allocProfile != "" {
		if profilePort, err = localcluster.FreePort(); err != nil {
			return err
		}
		args = append(args, "--profiling-address", fmt.Sprintf("127.0.0.1:%d", profilePort))
	}
	cmd := exec.Command(bin, args...)
	if o.memoryLimit != "" {
		if cmd, err = inMemoryCgroup(o.memoryLimit, bin, args); err != nil {
			return err
		}
	}
	cmd.Env = append(os.Environ(), webhookEnv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	loadStart := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	if floor {
		metricsURL = base + "/metrics" // the floor server's empty page
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13},
		MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers, ForceAttemptHTTP2: false,
	}}
	if err := localcluster.WaitReady(client, base+"/readyz", 120*time.Second); err != nil {
		return err
	}
	server := "webhook"
	if floor {
		server = "floor server"
	}
	fmt.Printf("load: %s ready in %s (pid %d%s)\n", server, time.Since(loadStart).Round(time.Millisecond), cmd.Process.Pid, envNote(webhookEnv))
	if fromCluster {
		printListed(logFile.Name())
	}
	rssAtRest := rssKiB(cmd.Process.Pid, "VmRSS")
	if o.writes > 0 {
		return writesPhase(client, base, metricsURL, size, o.writes, duration, o.claims)
	}

	mix := synthetic.Reviews(size)
	// Warm up connections and code paths.
	closedLoop(client, base, mix, workers, 2*time.Second)

	profiled := make(chan error, 1)
	if cpuProfile != "" {
		go func() {
			profiled <- fetchProfile(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", profilePort, int(duration.Seconds())-1), cpuProfile)
		}()
	}
	cpu0 := cpuTime(cmd.Process.Pid)
	sat := closedLoop(client, base, mix, workers, duration)
	cpu1 := cpuTime(cmd.Process.Pid)
	if cpuProfile != "" {
		if err := <-profiled; err != nil {
			return fmt.Errorf("CPU profile: %w", err)
		}
		fmt.Printf("load: CPU profile of the saturation phase in %s (go tool pprof -top %s)\n", cpuProfile, cpuProfile)
	}
	rate := float64(sat.done) / sat.elapsed.Seconds()
	fmt.Printf("load: saturation: %.0f reviews/s with %d connections (%d reviews, %d errors)\n", rate, workers, sat.done, sat.errors)

	before, err := scrapeMetrics(client, metricsURL)
	if err != nil {
		return err
	}
	load, loadName := rate/2, "half load"
	if fixedRate > 0 {
		load, loadName = fixedRate, "a fixed load"
	}
	if o.allocProfile != "" {
		go func() {
			profiled <- fetchProfile(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/allocs?seconds=%d", profilePort, int(duration.Seconds())-1), o.allocProfile)
		}()
	}
	half := openLoop(client, base, mix, load, duration)
	if o.allocProfile != "" {
		if err := <-profiled; err != nil {
			return fmt.Errorf("allocation profile: %w", err)
		}
		fmt.Printf("load: allocation profile of the latency phase in %s (go tool pprof -sample_index=alloc_space -top %s)\n", o.allocProfile, o.allocProfile)
	}
	fmt.Printf("load: at %s (%.0f/s): p50 %s, p99 %s, p99.9 %s (%d reviews, %d errors)\n",
		loadName, load, pct(half.latencies, 50), pct(half.latencies, 99), pct(half.latencies, 99.9), half.done, half.errors)
	after, err := scrapeMetrics(client, metricsURL)
	if err != nil {
		return err
	}
	if !floor {
		fmt.Printf("load: at %s, inside the webhook's handlers (its histogram): p50 <= %s, p99 <= %s, p99.9 <= %s\n", loadName,
			bucketQuantile(before.buckets, after.buckets, 0.50), bucketQuantile(before.buckets, after.buckets, 0.99), bucketQuantile(before.buckets, after.buckets, 0.999))
		// What the collector is given to do: p99 follows how often it runs (BENCHMARKS-LOG.md).
		if cycles := after.gcCycles - before.gcCycles; cycles > 0 && half.done > 0 {
			fmt.Printf("load: at %s, the webhook allocated %.1f KiB per review and collected %.0f times (every %s)\n", loadName,
				(after.allocBytes-before.allocBytes)/float64(half.done)/1024, cycles, (half.elapsed / time.Duration(cycles)).Round(time.Millisecond))
		}
	}

	cpuPerReview := time.Duration(float64(cpu1-cpu0) / float64(sat.done))
	peak := rssKiB(cmd.Process.Pid, "VmHWM")
	fmt.Printf("load: CPU per review at saturation: %s (%s process, user+system)\n", cpuPerReview, server)
	fmt.Printf("load: RSS: %d MiB after loading the snapshot, %d MiB peak\n", rssAtRest/1024, peak/1024)
	fmt.Printf("load: errors: %d\n", sat.errors+half.errors)
	if sat.errors+half.errors > 0 {
		return fmt.Errorf("%d reviews failed; see %s", sat.errors+half.errors, filepath.Join(work, "webhook.log"))
	}
	if o.tools && toolSource != nil {
		return timeTools(bin, toolSource)
	}
	return nil
}

// holdUntilInterrupted keeps the control plane for later runs (-cluster-kubeconfig) until SIGINT
// or SIGTERM, then stops it.
func holdUntilInterrupted(kubeconfig string, stop func()) {
	fmt.Printf("load: the control plane keeps running; more runs: go run ./hack/bench/load -from-cluster -cluster-kubeconfig %s (interrupt to stop it)\n", kubeconfig)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	<-signals
	stop()
}

func envNote(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return ", " + strings.Join(env, " ")
}

// fetchProfile saves a pprof profile from url to path.
func fetchProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// scraped is what the load harness reads from the webhook's /metrics: the cumulative counts
// of its review-duration histogram, both webhooks together, by upper bound; the bytes the Go
// runtime has allocated; and how many collections it has run.
type scraped struct {
	buckets              map[float64]float64
	allocBytes, gcCycles float64
}

func scrapeMetrics(client *http.Client, metricsURL string) (scraped, error) {
	out := scraped{buckets: map[float64]float64{}}
	resp, err := client.Get(metricsURL)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "go_memstats_alloc_bytes_total "); ok {
			if out.allocBytes, err = strconv.ParseFloat(v, 64); err != nil {
				return out, err
			}
		}
		if v, ok := strings.CutPrefix(line, "go_gc_duration_seconds_count "); ok {
			if out.gcCycles, err = strconv.ParseFloat(v, 64); err != nil {
				return out, err
			}
		}
		if !strings.HasPrefix(line, "policyattachment_review_duration_seconds_bucket{") {
			continue
		}
		le := line[strings.Index(line, `le="`)+4:]
		le = le[:strings.Index(le, `"`)]
		bound := math.Inf(1)
		if le != "+Inf" {
			if bound, err = strconv.ParseFloat(le, 64); err != nil {
				return out, err
			}
		}
		count, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			return out, err
		}
		out.buckets[bound] += count
	}
	return out, sc.Err()
}

// bucketQuantile is the upper bound of the bucket holding quantile q of the reviews
// counted between two scrapes.
func bucketQuantile(before, after map[float64]float64, q float64) string {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	total := after[math.Inf(1)] - before[math.Inf(1)]
	for _, b := range bounds {
		if after[b]-before[b] >= q*total {
			if math.IsInf(b, 1) {
				return "+Inf"
			}
			return (time.Duration(b * float64(time.Second))).String()
		}
	}
	return "?"
}

type result struct {
	done, errors int64
	elapsed      time.Duration
	latencies    []time.Duration
}

// responseBuffers keep the generator's own allocations, and so its share of the two
// cores it shares with the webhook, small.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// send posts one review and reports whether the answer is the expected verdict. The
// webhook writes "allowed" once, in the response (see pkg/admission/transport.go), so the
// check reads the bytes instead of decoding them.
func send(client *http.Client, base string, r synthetic.Review) bool {
	resp, err := client.Post(base+r.Path, "application/json", bytes.NewReader(r.Body))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer responseBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		return false
	}
	want := allowedFalse
	if r.Allowed {
		want = allowedTrue
	}
	return bytes.Count(buf.Bytes(), allowedKey) == 1 && bytes.Contains(buf.Bytes(), want)
}

var (
	allowedKey   = []byte(`"allowed":`)
	allowedTrue  = []byte(`"allowed":true`)
	allowedFalse = []byte(`"allowed":false`)
)

func closedLoop(client *http.Client, base string, mix []synthetic.Review, workers int, d time.Duration) result {
	var done, errs atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; time.Now().Before(stop); i++ {
				if !send(client, base, mix[i%len(mix)]) {
					errs.Add(1)
				}
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	return result{done: done.Load(), errors: errs.Load(), elapsed: time.Since(start)}
}

// openLoop sends at a fixed rate and measures each latency from its scheduled time, so a
// slow answer is not hidden by the requests it delayed.
func openLoop(client *http.Client, base string, mix []synthetic.Review, rate float64, d time.Duration) result {
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, n)
	var errs atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	start := time.Now()
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if !send(client, base, mix[i%len(mix)]) {
				errs.Add(1)
			}
			lat[i] = time.Since(at)
		}(i)
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return result{done: int64(n), errors: errs.Load(), elapsed: time.Since(start), latencies: lat}
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i].Round(time.Microsecond)
}

// cpuTime reads the process's user+system CPU time from /proc (clock ticks of 10ms).
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// rssKiB reads VmRSS or VmHWM (peak) of a process.
func rssKiB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field+":") {
			v, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return v
		}
	}
	return 0
}
