package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// readWait is the API server's own account of its consistent reads of one resource: how
// many it served and how long they waited, in sum, for its watch cache to be as fresh as
// etcd (apiserver_watch_cache_read_wait_seconds, a List with no resourceVersion).
type readWait struct {
	reads float64 // apiserver_watch_cache_consistent_read_total, fallbacks to etcd included
	waits float64 // the wait histogram's count
	sum   float64 // its sum, seconds
}

// scrapeReadWait reads the API server's /metrics for resource (colorpolicies).
func scrapeReadWait(cfg *rest.Config, resource string) (readWait, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return readWait{}, err
	}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/metrics")
	if err != nil {
		return readWait{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return readWait{}, fmt.Errorf("GET /metrics of the API server: %d %s", resp.StatusCode, body)
	}
	var out readWait
	label := `resource="` + resource + `"`
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, label) {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		_, value, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.Fields(value + " 0")[0], 64)
		if err != nil {
			continue
		}
		switch name {
		case "apiserver_watch_cache_consistent_read_total":
			out.reads += v
		case "apiserver_watch_cache_read_wait_seconds_count":
			out.waits += v
		case "apiserver_watch_cache_read_wait_seconds_sum":
			out.sum += v
		}
	}
	return out, sc.Err()
}

// since describes the consistent reads between two scrapes, per create.
func (after readWait) since(before readWait, creates int) string {
	reads, waits, sum := after.reads-before.reads, after.waits-before.waits, after.sum-before.sum
	if waits == 0 {
		return fmt.Sprintf("%.0f consistent reads", reads)
	}
	return fmt.Sprintf("%.0f consistent reads, waited %s in sum, %s each, %s per create",
		reads, seconds(sum), seconds(sum/waits), seconds(sum/float64(creates)))
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond)
}

// requestLog counts and times the webhook's own requests to the API server (the live
// reads and the claims), by what they are: its rest.Config's WrapTransport sees each.
// Watches are left out.
type requestLog struct {
	resource string // the policy kind's resource (colorpolicies)
	mu       sync.Mutex
	byKind   map[string]requestStat
}

type requestStat struct {
	n   int
	sum time.Duration
}

func newRequestLog(resource string) *requestLog {
	return &requestLog{resource: resource, byKind: map[string]requestStat{}}
}

// wrap is a rest.Config WrapTransport.
func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		kind := l.classify(r)
		if kind == "" {
			return rt.RoundTrip(r)
		}
		start := time.Now()
		resp, err := rt.RoundTrip(r)
		took := time.Since(start)
		l.mu.Lock()
		s := l.byKind[kind]
		s.n++
		s.sum += took
		l.byKind[kind] = s
		l.mu.Unlock()
		return resp, err
	})
}

// classify names a request: "list" (the live read's count and names), "get" (a policy by
// name), "lease" (a claim); "" for anything else (watches, the feeds' first lists, which
// come before any phase).
func (l *requestLog) classify(r *http.Request) string {
	q := r.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		return ""
	}
	path := r.URL.Path
	switch {
	case strings.Contains(path, "/coordination.k8s.io/"):
		return "lease " + r.Method
	case r.Method != http.MethodGet:
		return ""
	case strings.HasSuffix(path, "/"+l.resource):
		return "list"
	case strings.Contains(path, "/"+l.resource+"/"):
		return "get"
	}
	return ""
}

func (l *requestLog) snapshot() map[string]requestStat {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]requestStat, len(l.byKind))
	for k, v := range l.byKind {
		out[k] = v
	}
	return out
}

// describe gives the requests since before, per create, with their mean time.
func describe(after, before map[string]requestStat, creates int) string {
	var parts []string
	for _, kind := range []string{"list", "get", "lease POST", "lease GET", "lease PUT", "lease DELETE"} {
		a, b := after[kind], before[kind]
		if n := a.n - b.n; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f (%s each)", kind, float64(n)/float64(creates),
				((a.sum-b.sum)/time.Duration(n)).Round(10*time.Microsecond)))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
