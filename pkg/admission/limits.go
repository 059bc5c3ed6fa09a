package admission

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Limits bound what one review door reads: how long a body may take to arrive, and how much
// memory the reviews in flight may hold between them. Past either bound a review is answered
// at once, never queued: the API server retries or reports, and the replica stays up.
type Limits struct {
	// BodyTimeout is how long a review's body may take to arrive, from the moment its headers
	// did (DefaultBodyTimeout when zero). The API server sends a body at once; one that
	// stalls or trickles is refused and its connection closed.
	BodyTimeout time.Duration
	// Memory bounds the memory the reviews in flight hold (nil: no bound).
	Memory *MemoryBudget
	// ClaimRate bounds the claims one caller may have the replica take per second (nil: no
	// bound); NewServer drops it when the port authenticates its callers.
	ClaimRate *ClaimRate
}

// DefaultBodyTimeout is well inside the configurations' timeoutSeconds (5) and the review's
// deadline (3 s): a body that has not arrived by then would be answered too late anyway.
const DefaultBodyTimeout = 2 * time.Second

// DecodeFactor is the memory a review holds per byte of its body, once decoded: the body
// itself, the generic JSON of the object (maps and strings cost about ten times the JSON
// that spells them) and the policy built from it. A review of 36,000 targetRefs (2.6 MB)
// allocates 18.3 times its size from the first byte read to the answer (BENCHMARKS.md,
// "Bounded reviews"): that is an upper bound of what it holds at once.
const DecodeFactor = 18

// smallBody is the size of every review a real policy makes (a kubectl-applied policy's
// review is 3 to 20 KiB); bodies up to it may use the budget's reserve, so large bodies in
// flight cannot starve ordinary reviews.
const smallBody = 64 << 10

// MemoryBudget is a bound on the memory the reviews in flight hold, charged by body size
// times DecodeFactor as the body is read. The last eighth is kept for small bodies.
type MemoryBudget struct {
	mu          sync.Mutex
	limit, used int64
}

// NewMemoryBudget bounds reviews in flight to limit bytes (decoded).
func NewMemoryBudget(limit int64) *MemoryBudget { return &MemoryBudget{limit: limit} }

// DefaultMemoryBudget is a quarter of the process's memory limit (GOMEMLIMIT, which
// `webhook serve` sets from the container's limit), or 128 MiB without one: the rest holds
// the snapshot of the cluster and the runtime's headroom.
func DefaultMemoryBudget() *MemoryBudget {
	limit := debug.SetMemoryLimit(-1)
	if limit <= 0 || limit == math.MaxInt64 {
		return NewMemoryBudget(128 << 20)
	}
	return NewMemoryBudget(limit / 4)
}

// Limit is the budget in bytes.
func (b *MemoryBudget) Limit() int64 { return b.limit }

// take charges n more bytes for a body that has read total bytes so far; false when they do
// not fit (nothing is charged then).
func (b *MemoryBudget) take(n, total int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit
	if total > smallBody {
		room -= b.limit / 8
	}
	if b.used+n > room {
		return false
	}
	b.used += n
	reviewMemoryInFlight.Set(float64(b.used))
	return true
}

// give returns n bytes.
func (b *MemoryBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	reviewMemoryInFlight.Set(float64(b.used))
}

// errOverBudget is a body that did not fit in the memory budget.
var errOverBudget = errors.New("over the memory budget")

// budgetStep is how much of the budget a body takes at a time as it is read: a body's
// Content-Length may be absent or false, so charges follow the bytes actually read.
const budgetStep = 32 << 10

// chargedReader reads at most limit bytes and charges the budget for what it reads, a step
// ahead; charged is what to give back when the review is over.
type chargedReader struct {
	r       io.Reader
	limit   int64
	budget  *MemoryBudget
	read    int64
	charged int64
}

func (c *chargedReader) Read(p []byte) (int, error) {
	if c.read >= c.limit {
		return 0, io.EOF
	}
	if len(p) > budgetStep {
		p = p[:budgetStep]
	}
	if rest := c.limit - c.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	if c.budget != nil && c.read+int64(len(p)) > c.charged/DecodeFactor {
		if !c.budget.take(budgetStep*DecodeFactor, c.read+budgetStep) {
			return 0, errOverBudget
		}
		c.charged += budgetStep * DecodeFactor
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

// release gives back what was charged.
func (c *chargedReader) release() {
	if c.budget != nil && c.charged > 0 {
		c.budget.give(c.charged)
		c.charged = 0
	}
}

// overBudgetMessage says why a review was refused at the memory bound.
func overBudgetMessage(b *MemoryBudget) string {
	return fmt.Sprintf("the policy attachment webhook is already reading and judging as many reviews as its memory bound allows (%d MiB, a quarter of its memory limit; --review-memory), so this one is refused unread; retry", b.Limit()>>20)
}

// Metrics of the bounds.
var (
	reviewMemoryInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "policyattachment_review_memory_in_flight_bytes",
		Help: "Memory charged to the reviews being read and judged now (body size times the decoding factor), against --review-memory.",
	})
	reviewsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policyattachment_reviews_refused_total",
		Help: "Reviews refused before they were judged, by webhook and bound: body_timeout (the body did not arrive within --review-body-timeout), memory (over --review-memory), size (over 7 MiB), claim_rate (its caller over --caller-claim-rate).",
	}, []string{"webhook", "bound"})
)

func init() { metrics.Registry.MustRegister(reviewMemoryInFlight, reviewsRefused) }

// deadliner is a connection's read deadline, as net/http's response offers it.
type deadliner interface{ SetReadDeadline(time.Time) error }

// readDeadliner finds the read deadline of w's connection through the writers wrapped around
// it (controller-runtime's metrics wrap every webhook's), as http.ResponseController does
// without the error value it allocates where there is none; nil when there is none (a
// ResponseRecorder).
func readDeadliner(w http.ResponseWriter) deadliner {
	for {
		if d, ok := w.(deadliner); ok {
			return d
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}
