package main

import (
	"bufio"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// writesPhase sends CREATE reviews of new policies at rate per second for d, each on a
// Service no policy targets (synthetic.Creates), and prints their latency and what the
// webhook asked of the API server meanwhile, per review and per second: the live read's
// load at that write rate. The webhook's client-go counters (rest_client_requests_total)
// count every request it made, by method; its feeds' watches are open before the phase and
// add nothing unless they relist.
func writesPhase(client *http.Client, base, metricsURL string, size synthetic.Size, rate float64, d time.Duration, claims bool) error {
	creates := synthetic.Creates(size, int(rate*d.Seconds()))
	before, err := scrapeRequests(client, metricsURL)
	if err != nil {
		return err
	}
	res := openLoop(client, base, creates, rate, d)
	after, err := scrapeRequests(client, metricsURL)
	if err != nil {
		return err
	}
	mode := "with claims"
	if !claims {
		mode = "without claims"
	}
	fmt.Printf("load: %d creates at %.0f/s (%s): p50 %s, p99 %s (%d errors)\n", res.done, rate, mode, pct(res.latencies, 50), pct(res.latencies, 99), res.errors)
	methods := make([]string, 0, len(after))
	for m := range after {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	total := 0.0
	for _, m := range methods {
		n := after[m] - before[m]
		if n == 0 {
			continue
		}
		total += n
		fmt.Printf("load:   %s: %.2f per review, %.1f/s\n", m, n/float64(res.done), n/res.elapsed.Seconds())
	}
	fmt.Printf("load:   all requests to the API server: %.2f per review, %.1f/s\n", total/float64(res.done), total/res.elapsed.Seconds())
	if res.errors > 0 {
		return fmt.Errorf("%d creates were not admitted", res.errors)
	}
	return nil
}

// scrapeRequests reads the webhook's rest_client_requests_total, summed by method.
func scrapeRequests(client *http.Client, metricsURL string) (map[string]float64, error) {
	resp, err := client.Get(metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		method := line[strings.Index(line, `method="`)+len(`method="`):]
		method = method[:strings.Index(method, `"`)]
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			return nil, err
		}
		out[method] += v
	}
	return out, sc.Err()
}
