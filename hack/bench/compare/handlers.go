package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/policyattachment/webhook/test/harness/localcluster"
)

// handlerTime reads the webhook's own review-duration histogram (sum and count by webhook)
// from its /metrics, to tell the time inside its handlers from the time around them.
type handlerTime map[string]struct{ sum, count float64 }

// scrapeHandlerTime reads the metrics port as Prometheus does (HTTPS, a token allowed to
// get /metrics).
func scrapeHandlerTime(webhook *localcluster.Cluster) (handlerTime, error) {
	page, err := webhook.ScrapeMetrics()
	if err != nil {
		return nil, err
	}
	out := handlerTime{}
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		for _, suffix := range []string{"_sum", "_count"} {
			rest, ok := strings.CutPrefix(line, "policyattachment_review_duration_seconds"+suffix+`{webhook="`)
			if !ok {
				continue
			}
			name, value, _ := strings.Cut(rest, `"} `)
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, fmt.Errorf("metrics line %q: %w", line, err)
			}
			t := out[name]
			if suffix == "_sum" {
				t.sum = v
			} else {
				t.count = v
			}
			out[name] = t
		}
	}
	return out, sc.Err()
}

// since describes the mean handler time of each webhook between two scrapes.
func (after handlerTime) since(before handlerTime) string {
	var parts []string
	for _, name := range []string{"validate", "mutate"} {
		a, b := after[name], before[name]
		if n := a.count - b.count; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", name, time.Duration((a.sum-b.sum)/n*float64(time.Second)).Round(time.Microsecond)))
		}
	}
	return strings.Join(parts, ", ")
}
