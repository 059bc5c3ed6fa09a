package admission

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// rawPOST opens a connection to srv and sends a review's headers announcing length bytes of
// body, then body (which may be shorter); the caller sends the rest, or not.
func rawPOST(t *testing.T, srv *httptest.Server, length int, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", length, body)
	require.NoError(t, err)
	return conn
}

// readAnswer reads one HTTP answer from conn and decodes its AdmissionReview.
func readAnswer(t *testing.T, conn net.Conn) (*http.Response, admissionv1.AdmissionReview) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&review))
	return resp, review
}

// closedAfter reports whether conn is closed by the server (EOF, not a timeout) once the
// answer has been read.
func closedAfter(t *testing.T, conn net.Conn, resp *http.Response) bool {
	t.Helper()
	if !resp.Close {
		return false
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := conn.Read(make([]byte, 1))
	// EOF, or a reset when the server closed with the body's rest unread.
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
}

func TestStalledAndTricklingBodiesAreRefusedAndClosed(t *testing.T) {
	handler := boundedReviewHandler("validate", &Validator{Store: readyStore(kinds.BuiltinKindTable(), index.New())},
		Limits{BodyTimeout: 300 * time.Millisecond})
	// Wrapped as controller-runtime's webhook server wraps every webhook (its metrics): the
	// connection's deadline is found through the wrapping writers.
	wrapped := promhttp.InstrumentHandlerCounter(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wrapped"}, []string{"code"}), handler)
	srv := httptest.NewServer(wrapped)
	defer srv.Close()
	body := hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [{"group": "", "kind": "Service", "name": "b"}], "color": "red"}`))
	want := "the review's body did not arrive within 300ms (--review-body-timeout); the API server sends it at once"
	before := testutil.ToFloat64(reviewsRefused.WithLabelValues("validate", "body_timeout"))

	t.Run("stalled", func(t *testing.T) {
		start := time.Now()
		conn := rawPOST(t, srv, len(body), body[:20])
		resp, review := readAnswer(t, conn)
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
		assert.False(t, review.Response.Allowed)
		assert.Equal(t, int32(http.StatusRequestTimeout), review.Response.Result.Code)
		assert.Equal(t, want, review.Response.Result.Message)
		assert.True(t, closedAfter(t, conn, resp), "the connection is closed after the answer")
	})
	t.Run("trickling", func(t *testing.T) {
		conn := rawPOST(t, srv, len(body), "")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; i < len(body); i++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		})
		resp, review := readAnswer(t, conn)
		close(stop)
		wg.Wait()
		assert.Equal(t, int32(http.StatusRequestTimeout), review.Response.Result.Code)
		assert.Equal(t, want, review.Response.Result.Message)
		assert.True(t, closedAfter(t, conn, resp))
	})
	t.Run("a whole body is judged", func(t *testing.T) {
		conn := rawPOST(t, srv, len(body), body)
		_, review := readAnswer(t, conn)
		assert.Equal(t, int32(http.StatusUnprocessableEntity), review.Response.Result.Code, "judged: a ColorPolicy may not target a Service")
	})
	assert.Equal(t, before+2, testutil.ToFloat64(reviewsRefused.WithLabelValues("validate", "body_timeout")))
}

func TestMemoryBudgetRefusesAtOnceAndKeepsRoomForSmallReviews(t *testing.T) {
	// 4 MiB decoded: about 227 KiB of body in flight, the last eighth of it only for bodies
	// up to 64 KiB.
	budget := NewMemoryBudget(4 << 20)
	handler := boundedReviewHandler("validate", &Validator{Store: readyStore(kinds.BuiltinKindTable(), index.New())},
		Limits{BodyTimeout: 5 * time.Second, Memory: budget})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	big := hostileReview("admission.k8s.io/v1", colorObject(`{"color": "`+strings.Repeat("x", 150<<10)+`"}`))
	small := hostileReview("admission.k8s.io/v1", colorObject(`{"targetRefs": [{"group": "", "kind": "Service", "name": "b"}], "color": "red"}`))

	// A large body in flight, stalled after 96 KiB: it holds 128 KiB of the budget (what it
	// read, and the step it waits to read into).
	held := rawPOST(t, srv, len(big), big[:96<<10])
	require.Eventually(t, func() bool { return testutil.ToFloat64(reviewMemoryInFlight) == float64(128<<10*DecodeFactor) },
		5*time.Second, 5*time.Millisecond)

	// A second large body does not fit: refused at once, unread, and its connection closed.
	start := time.Now()
	conn := rawPOST(t, srv, len(big), big)
	resp, review := readAnswer(t, conn)
	assert.Less(t, time.Since(start), 2*time.Second, "answered at once, not queued")
	assert.False(t, review.Response.Allowed)
	assert.Equal(t, int32(http.StatusTooManyRequests), review.Response.Result.Code)
	assert.Equal(t, "the policy attachment webhook is already reading and judging as many reviews as its memory bound allows (4 MiB, a quarter of its memory limit; --review-memory), so this one is refused unread; retry", review.Response.Result.Message)
	assert.True(t, closedAfter(t, conn, resp))

	// A real policy's review still fits, in the room kept for small bodies.
	conn = rawPOST(t, srv, len(small), small)
	_, review = readAnswer(t, conn)
	assert.Equal(t, int32(http.StatusUnprocessableEntity), review.Response.Result.Code, "judged")

	// Once the large body is answered, its charge is given back.
	_, err := held.Write([]byte(big[96<<10:]))
	require.NoError(t, err)
	_, review = readAnswer(t, held)
	assert.Equal(t, int32(http.StatusUnprocessableEntity), review.Response.Result.Code, "judged: no targets")
	assert.Equal(t, 0.0, testutil.ToFloat64(reviewMemoryInFlight))
}

func TestMutatorDoesNotPredictPoliciesWithTooManyTargets(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), index.New())
	refs := make([]string, 5000)
	for i := range refs {
		refs[i] = fmt.Sprintf(`{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r%d"}`, i)
	}
	req := review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [`+strings.Join(refs, ",")+`], "color": "red"}}`)
	resp := (&Mutator{Store: store}).Handle(context.Background(), req)
	assert.True(t, resp.Allowed, "the validating webhook denies it, in its words")
	assert.Empty(t, resp.Patches, "no prediction over 5,000 targets")
}
