package claims

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var sweepNow = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// claimLease is a claim Lease named name, held for holder ("" released), last renewed ago
// before sweepNow, with its admissions as AnnotationAdmitted holds them.
func claimLease(name, holder string, ago time.Duration, admitted string) *coordinationv1.Lease {
	renewed := metav1.NewMicroTime(sweepNow.Add(-ago))
	seconds := int32(DefaultDuration / time.Second)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{LabelClaim: "true"},
		Annotations: map[string]string{AnnotationKey: "gateway.networking.k8s.io/BackendTLSPolicy /Service/app/" + name}},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &seconds, RenewTime: &renewed}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	if admitted != "" {
		l.Annotations[AnnotationAdmitted] = admitted
	}
	return l
}

// TestSweep: each claim the sweep reads ends as its review would have ended it: released
// claims are kept for KeepReleased, held ones until they expire; an expired one is deleted
// when its policy is not stored and nothing was admitted under it lately, and released
// otherwise (recording its policy when stored); one whose policy cannot be asked about is
// left for the next sweep.
func TestSweep(t *testing.T) {
	const recent = `[{"policy":"app/earlier","at":"2026-11-25T09:59:40Z"}]`
	const old = `[{"policy":"app/earlier","at":"2026-11-25T09:50:00Z"}]`
	stored := map[string]bool{"app/stored": true}
	leases := newFakeLeases(
		claimLease("released-lately", "", 30*time.Second, recent),
		claimLease("released-long-ago", "", KeepReleased+time.Second, recent),
		claimLease("held", "app/in-review", 5*time.Second, ""),
		claimLease("held-past-its-duration", "app/never-stored", DefaultDuration+time.Second, ""),
		claimLease("held-past-its-duration-stored", "app/stored", DefaultDuration+time.Second, old),
		claimLease("held-past-its-duration-after-an-admission", "app/never-stored", DefaultDuration+time.Second, recent),
		claimLease("held-past-its-duration-unknown", "app/unknown", DefaultDuration+time.Second, ""),
		claimLease("no-renew-time", "app/x", 0, ""),
	)
	leases.items["no-renew-time"].Spec.RenewTime = nil
	other := claimLease("not-a-claim", "app/x", time.Hour, "")
	other.Labels = nil
	leases.put(other)

	c := &Claimer{Leases: leases, Replica: "r", now: func() time.Time { return sweepNow }}
	abandoned := testutil.ToFloat64(claimsAbandoned)
	err := c.Sweep(context.Background(), func(_ context.Context, key, holder string) (bool, error) {
		if holder == "app/unknown" {
			return false, errors.New("the API server did not answer")
		}
		return stored[holder], nil
	})
	require.EqualError(t, err, "asking whether app/unknown, which claim held-past-its-duration-unknown was taken for, is stored: the API server did not answer")
	assert.Equal(t, map[string]leaseState{
		"released-lately":               {Admitted: recent},
		"held":                          {Holder: "app/in-review"},
		"held-past-its-duration-stored": {Admitted: `[{"policy":"app/stored","at":"2026-11-25T10:00:00Z"}]`},
		"held-past-its-duration-after-an-admission": {Admitted: recent},
		"held-past-its-duration-unknown":            {Holder: "app/unknown"},
		"not-a-claim":                               {Holder: "app/x"},
	}, leases.state())
	assert.Equal(t, abandoned+4, testutil.ToFloat64(claimsAbandoned), "the three expired claims and the one without a renewTime ended")
	assert.Equal(t, 2.0, testutil.ToFloat64(claimLeases.WithLabelValues("held")))
	assert.Equal(t, 3.0, testutil.ToFloat64(claimLeases.WithLabelValues("released")))

	// The next sweep, a minute later, finds the policy's answer and ends the rest.
	later := sweepNow.Add(KeepReleased + time.Second)
	c.now = func() time.Time { return later }
	require.NoError(t, c.Sweep(context.Background(), func(context.Context, string, string) (bool, error) { return false, nil }))
	assert.Empty(t, func() map[string]leaseState {
		s := leases.state()
		delete(s, "not-a-claim")
		return s
	}())
}

// TestClaimTakenAfterItsReviewIsGivenBack: a review that ends (its caller hung up, or its
// deadline passed) while the create of its claim is in flight does not leave the Lease the
// API server creates anyway: the create runs to its end, and the claim is deleted then.
func TestClaimTakenAfterItsReviewIsGivenBack(t *testing.T) {
	leases := newFakeLeases()
	inFlight, answer := make(chan struct{}), make(chan struct{})
	leases.beforeCreate = func() {
		close(inFlight)
		<-answer
	}
	c := &Claimer{Leases: leases, Replica: "r"}
	late := testutil.ToFloat64(claimsTakenLate)
	ctx, hangUp := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		_, _, err := c.Claim(ctx, "app/p", []string{"gateway.networking.k8s.io/BackendTLSPolicy /Service/app/s"}, nil)
		result <- err
	}()
	<-inFlight
	hangUp()
	require.EqualError(t, <-result, "claiming the attachment points of app/p: context canceled")
	close(answer) // the API server creates the Lease after the review is over
	require.Eventually(t, func() bool { return testutil.ToFloat64(claimsTakenLate) == late+1 && len(leases.state()) == 0 },
		5*time.Second, 5*time.Millisecond, "the claim created after its review was over is deleted")
	assert.Equal(t, 1, leases.version, "it was created, once")
}

// TestClaimsHeld counts the claims a replica holds: taken, then given back once.
func TestClaimsHeld(t *testing.T) {
	c := &Claimer{Leases: newFakeLeases(), Replica: "r"}
	before := testutil.ToFloat64(claimsHeld)
	release, _, err := c.Claim(context.Background(), "app/p", []string{"k/Service/app/a", "k/Service/app/b"}, nil)
	require.NoError(t, err)
	assert.Equal(t, before+2, testutil.ToFloat64(claimsHeld))
	release(false)
	release(false) // a second call gives nothing back twice
	assert.Equal(t, before, testutil.ToFloat64(claimsHeld))
}
