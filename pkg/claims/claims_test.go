package claims

import (
	"testing"

	"github.com/stretchr/testify/assert"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeaseNames: every replica takes a policy's keys in one order (two reviews taking two
// keys in opposite orders would each hold one and wait for the other), each key once.
func TestLeaseNames(t *testing.T) {
	a := leaseNames([]string{"k/Service/app/b", "k/Service/app/a", "k/Service/app/b"})
	b := leaseNames([]string{"k/Service/app/a", "k/Service/app/b"})
	assert.Equal(t, a, b)
	assert.Len(t, a, 2)
	for _, n := range a {
		assert.Regexp(t, `^policyattachment-claim-[0-9a-f]{20}$`, n.lease)
	}
}

func TestAdmittedOn(t *testing.T) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		AnnotationAdmitted: `[{"policy":"app/a","at":"2026-11-25T10:00:00Z"},{"policy":"app/b","at":"2026-11-25T10:00:30Z"}]`,
	}}}
	got := admittedOn(l)
	assert.Equal(t, []string{"app/a", "app/b"}, []string{got[0].Policy, got[1].Policy})
	l.Annotations[AnnotationAdmitted] = "not JSON"
	assert.Empty(t, admittedOn(l), "an unreadable annotation names no policy")
}
