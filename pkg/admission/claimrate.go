package admission

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/policyattachment/webhook/pkg/clusterstate"
)

// ClaimRate bounds the claims (a Lease each, package claims) that one caller may have this
// replica take per second for policies that are then not stored, while the review port does
// not authenticate its callers: then anyone who reaches a pod can have it write Leases, and
// without a bound a flood of forged reviews would fill etcd with them (and its history until
// the next compaction) as fast as the replica can judge. A caller is a source address. Each
// claim is charged when it is taken and refunded when the API server stores the policy as it
// was judged (package clusterstate confirms it), so the API server's own reviews of the
// writes it stores cost nothing however many it sends (a GitOps sync of thousands of
// policies), and only claims whose policy is never stored (forged reviews; writes another
// webhook or the API server refused) use up the bucket. Each caller's bucket holds twice the
// rate; a review that needs more claims than its bucket holds waits for them up to half its
// deadline, and is refused past that. A review that claims more keys than a whole bucket (a
// policy whose selectors select hundreds of targets) may take them when the bucket is full,
// and leaves it in debt until they are refunded or refilled.
type ClaimRate struct {
	perSecond, burst float64

	mu      sync.Mutex
	callers map[string]*claimBucket
	now     func() time.Time
}

// claimBucket is a caller's tokens at a time; negative is debt.
type claimBucket struct {
	tokens float64
	at     time.Time
}

// DefaultClaimRate is `--caller-claim-rate`'s default: a kubectl apply of a folder, or a
// GitOps sync, writes policies through its API server one after another, well under it,
// and claims about one key per policy target.
const DefaultClaimRate = 50

// maxClaimCallers bounds the callers remembered at once; past it, callers whose buckets are
// full again are forgotten (a full bucket is what a new caller gets), and when none is, the
// newcomers share one bucket.
const maxClaimCallers = 4096

// overflowCaller is the bucket newcomers share when maxClaimCallers are in debt.
const overflowCaller = "\x00overflow"

// NewClaimRate bounds each caller to perSecond claims a second, in bursts of twice that.
func NewClaimRate(perSecond float64) *ClaimRate {
	return &ClaimRate{perSecond: perSecond, burst: 2 * perSecond, callers: map[string]*claimBucket{}, now: time.Now}
}

// PerSecond is the rate each caller is bound to.
func (r *ClaimRate) PerSecond() float64 { return r.perSecond }

// take charges n claims to caller. It returns how long the caller must wait before taking
// them, or false when that is longer than maxWait (then nothing is charged).
func (r *ClaimRate) take(caller string, n int, maxWait time.Duration) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b := r.bucket(caller, now)
	b.tokens = min(r.burst, b.tokens+now.Sub(b.at).Seconds()*r.perSecond)
	b.at = now
	need := min(float64(n), r.burst) // more than a bucket: a full one lets them through
	var wait time.Duration
	if b.tokens < need {
		wait = time.Duration(float64(time.Second) * (need - b.tokens) / r.perSecond)
	}
	if wait > maxWait {
		return 0, false
	}
	b.tokens -= float64(n)
	return wait, true
}

// refund gives n claims back to caller: their policy was stored as judged.
func (r *ClaimRate) refund(caller string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.callers[caller]; ok {
		b.tokens = min(r.burst, b.tokens+float64(n))
	}
}

// bucket finds caller's bucket, making room for a new one when needed; r.mu is held.
func (r *ClaimRate) bucket(caller string, now time.Time) *claimBucket {
	if b, ok := r.callers[caller]; ok {
		return b
	}
	if len(r.callers) >= maxClaimCallers {
		for c, b := range r.callers {
			if b.tokens+now.Sub(b.at).Seconds()*r.perSecond >= r.burst {
				delete(r.callers, c)
			}
		}
		if len(r.callers) >= maxClaimCallers {
			caller = overflowCaller
			if b, ok := r.callers[caller]; ok {
				return b
			}
		}
	}
	b := &claimBucket{tokens: r.burst, at: now}
	r.callers[caller] = b
	return b
}

// Wrap bounds the claims taken through inner by the caller each review came from (the
// review door puts it in the review's context).
func (r *ClaimRate) Wrap(inner clusterstate.Claims) clusterstate.Claims {
	return &rateBoundClaims{rate: r, inner: inner}
}

type rateBoundClaims struct {
	rate  *ClaimRate
	inner clusterstate.Claims
}

// ClaimRateError is a review refused because its caller had this replica take more claims
// than its rate allows.
type ClaimRateError struct {
	Caller    string
	PerSecond float64
}

func (e *ClaimRateError) Error() string {
	return fmt.Sprintf("its caller (%s) had this replica take more than %g claims a second (--caller-claim-rate; the review port does not authenticate its callers, see docs/security.md)", e.Caller, e.PerSecond)
}

func (c *rateBoundClaims) Claim(ctx context.Context, owner string, keys []string, stored func(context.Context, string) bool) (func(bool), []string, error) {
	caller := callerOf(ctx)
	var maxWait time.Duration
	if deadline, ok := ctx.Deadline(); ok {
		maxWait = time.Until(deadline) / 2 // the other half is for the claims and the verdict
	}
	wait, ok := c.rate.take(caller, len(keys), maxWait)
	if !ok {
		reviewsRefused.WithLabelValues("validate", "claim_rate").Inc()
		return nil, nil, &ClaimRateError{Caller: caller, PerSecond: c.rate.perSecond}
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	release, recent, err := c.inner.Claim(ctx, owner, keys, stored)
	if err != nil {
		return nil, nil, err
	}
	return func(admitted bool) {
		if admitted {
			c.rate.refund(caller, len(keys))
		}
		release(admitted)
	}, recent, nil
}

type callerKey struct{}

// withCaller records in ctx the host of the address a review came from.
func withCaller(ctx context.Context, remoteAddr string) context.Context {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return context.WithValue(ctx, callerKey{}, host)
}

// callerOf is the caller withCaller recorded ("" when none was).
func callerOf(ctx context.Context) string {
	caller, _ := ctx.Value(callerKey{}).(string)
	return caller
}
