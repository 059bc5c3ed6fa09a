package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// TestClaimRate: each caller has a bucket of twice the rate; past it, a review waits as long
// as the rate says, up to what it may wait, and is refused, uncharged, beyond; one that needs
// more than a whole bucket passes on a full one and leaves it in debt. Callers do not share.
func TestClaimRate(t *testing.T) {
	type take struct {
		after   time.Duration // since the previous take
		caller  string
		n       int
		maxWait time.Duration
		wait    time.Duration
		ok      bool
	}
	for name, steps := range map[string][]take{
		"a burst, then the rate": {
			{caller: "a", n: 20, ok: true},
			{caller: "a", n: 1, maxWait: time.Second, wait: 100 * time.Millisecond, ok: true},
			{caller: "a", n: 1, maxWait: 150 * time.Millisecond, ok: false}, // would wait 200 ms
			{after: 200 * time.Millisecond, caller: "a", n: 1, ok: true},
		},
		"callers do not share": {
			{caller: "a", n: 20, ok: true},
			{caller: "b", n: 20, ok: true},
			{caller: "a", n: 1, ok: false},
		},
		"refilled to the burst, no more": {
			{caller: "a", n: 20, ok: true},
			{after: time.Hour, caller: "a", n: 20, ok: true},
			{caller: "a", n: 1, ok: false},
		},
		"more than a bucket passes on a full one, in debt": {
			{caller: "a", n: 50, ok: true},
			{caller: "a", n: 1, maxWait: time.Hour, wait: 3100 * time.Millisecond, ok: true},
			{caller: "a", n: 50, maxWait: 4 * time.Second, ok: false}, // a full bucket again is 5.1 s away
		},
	} {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			r := NewClaimRate(10)
			r.now = func() time.Time { return now }
			for i, s := range steps {
				now = now.Add(s.after)
				wait, ok := r.take(s.caller, s.n, s.maxWait)
				assert.Equal(t, []any{s.wait, s.ok}, []any{wait, ok}, "step %d", i)
			}
		})
	}
}

// TestClaimRateForgetsFullBuckets: past maxClaimCallers, the callers whose buckets are full
// again are forgotten; while every one is in debt, newcomers share one bucket.
func TestClaimRateForgetsFullBuckets(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	r := NewClaimRate(1)
	r.now = func() time.Time { return now }
	for i := range maxClaimCallers {
		_, ok := r.take(fmt.Sprint(i), 2, 0)
		require.True(t, ok)
	}
	_, ok := r.take("newcomer", 2, 0)
	assert.True(t, ok, "the first newcomer takes the shared bucket")
	_, ok = r.take("another", 1, 0)
	assert.False(t, ok, "and empties it for the next")
	assert.Len(t, r.callers, maxClaimCallers+1)

	now = now.Add(2 * time.Second)
	_, ok = r.take("later", 1, 0)
	assert.True(t, ok)
	assert.Len(t, r.callers, 1, "the full buckets were forgotten")
}

// countingClaims claims nothing and counts the claims asked of it.
type countingClaims struct{ keys int }

func (c *countingClaims) Claim(_ context.Context, _ string, keys []string, _ func(context.Context, string) bool) (func(bool), []string, error) {
	c.keys += len(keys)
	return func(bool) {}, nil, nil
}

// TestClaimRateThroughTheDoor: a caller past its rate is answered 429 in the webhook's words,
// and its reviews take no claim; another caller's reviews (the API server's) are judged.
func TestClaimRateThroughTheDoor(t *testing.T) {
	table := kinds.BuiltinKindTable()
	inner := &countingClaims{}
	rate := NewClaimRate(1)
	v := &Validator{Store: readyStore(table, index.New()), Claims: rate.Wrap(inner), Timeout: 100 * time.Millisecond}
	handler := boundedReviewHandler("validate", v, Limits{ClaimRate: rate})
	review := func(remoteAddr, name string) *admissionv1.AdmissionResponse {
		body := fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "1", "operation": "CREATE",
			"kind": {"group": "gateway.networking.k8s.io", "version": "v1", "kind": "BackendTLSPolicy"},
			"resource": {"group": "gateway.networking.k8s.io", "version": "v1", "resource": "backendtlspolicies"},
			"namespace": "app", "name": %q, "object": %s}}`, name, btls(name))
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(body))
		req.RemoteAddr = remoteAddr
		req.Header.Set("Content-Type", "application/json")
		handler.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		var out admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out.Response
	}
	refused := testutil.ToFloat64(reviewsRefused.WithLabelValues("validate", "claim_rate"))
	for i := range 2 {
		assert.True(t, review("10.0.0.9:40000", fmt.Sprint("forged-", i)).Allowed, "within the burst")
	}
	resp := review("10.0.0.9:40001", "forged-2")
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusTooManyRequests), resp.Result.Code)
	assert.Equal(t, "policy attachment review of BackendTLSPolicy app/forged-2: its caller (10.0.0.9) had this replica take more than 1 claims a second (--caller-claim-rate; the review port does not authenticate its callers, see docs/security.md); the write was not checked, so it is refused; retry", resp.Result.Message)
	assert.Equal(t, refused+1, testutil.ToFloat64(reviewsRefused.WithLabelValues("validate", "claim_rate")))
	assert.Equal(t, 2, inner.keys, "the refused review claimed nothing")

	assert.True(t, review("192.168.1.2:6443", "real").Allowed, "another caller has a bucket of its own")
	assert.Equal(t, 3, inner.keys)
}

// TestClaimRateRefundsStoredPolicies: the claims of a policy stored as judged are given back
// to its caller's bucket, so the API server's reviews of writes it stores cost nothing
// however many; those of a policy never stored stay charged.
func TestClaimRateRefundsStoredPolicies(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	rate := NewClaimRate(1)
	rate.now = func() time.Time { return now }
	claims := rate.Wrap(&countingClaims{})
	ctx := withCaller(context.Background(), "192.168.1.2:6443")
	for i := range 10 {
		release, _, err := claims.Claim(ctx, fmt.Sprint("app/stored-", i), []string{"k1", "k2"}, nil)
		require.NoError(t, err, "review %d", i)
		release(true)
	}
	release, _, err := claims.Claim(ctx, "app/refused", []string{"k1", "k2"}, nil)
	require.NoError(t, err)
	release(false)
	_, _, err = claims.Claim(ctx, "app/next", []string{"k1"}, nil)
	assert.Equal(t, &ClaimRateError{Caller: "192.168.1.2", PerSecond: 1}, err, "a policy not stored stays charged")
}
