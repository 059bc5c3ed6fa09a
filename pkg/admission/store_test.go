package admission

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules"
)

func btls(name string) string {
	return fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
		"metadata": {"name": %q, "namespace": "app"},
		"spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "b1", "sectionName": "https"}],
		         "validation": {"hostname": "b1.app", "wellKnownCACertificates": "System"}}}`, name)
}

// The second of two conflicting policies is denied even before any informer event: the
// first was reserved when it was admitted.
func TestStoreReservesAdmittedPolicies(t *testing.T) {
	v := validator(rules.NewMemorySnapshot())
	first := v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("one")))
	require.True(t, first.Allowed)
	second := v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("two")))
	require.False(t, second.Allowed)
	assert.Equal(t, `BackendTLSPolicy.gateway.networking.k8s.io "two" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service app/b1 section https already has BackendTLSPolicy app/one; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, second.Result.Message)
}

func TestStoreDryRunDoesNotReserve(t *testing.T) {
	v := validator(rules.NewMemorySnapshot())
	req := review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("one"))
	dry := true
	req.DryRun = &dry
	require.True(t, v.Handle(context.Background(), req).Allowed)
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("two"))).Allowed)
}

// Two reviews in flight at once for one conflict key: exactly one is admitted.
func TestStoreConcurrentPair(t *testing.T) {
	for run := 0; run < 50; run++ {
		v := validator(rules.NewMemorySnapshot())
		var wg sync.WaitGroup
		allowed := make([]bool, 2)
		for i := range allowed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				allowed[i] = v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls(fmt.Sprintf("p%d", i)))).Allowed
			}()
		}
		wg.Wait()
		require.NotEqual(t, allowed[0], allowed[1], "run %d: exactly one of the pair is admitted", run)
	}
}

func TestStoreReservationExpires(t *testing.T) {
	store := NewStore(rules.BuiltinKindTable(), rules.NewMemorySnapshot())
	clock := time.Unix(0, 0)
	store.now = func() time.Time { return clock }
	v := &Validator{Store: store}
	require.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("one"))).Allowed)

	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 1, store.ExpireReservations(), "never confirmed by the informer: dropped")
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("two"))).Allowed)

	// A reservation the informer confirmed stays.
	store.Upsert(schema.GroupKind{Group: rules.GatewayGroup, Kind: "BackendTLSPolicy"}, decodeJSON(t, btls("two")))
	clock = clock.Add(ReservationTTL + time.Second)
	assert.Equal(t, 0, store.ExpireReservations())
	assert.False(t, v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("three"))).Allowed)

	store.Remove(schema.GroupKind{Group: rules.GatewayGroup, Kind: "BackendTLSPolicy"}, "app", "two")
	assert.True(t, v.Handle(context.Background(), review(t, admissionv1.Create, rules.GatewayGroup, "BackendTLSPolicy", btls("four"))).Allowed)
}
