package clusterstate

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// countingReader is an API server that stores nothing and counts what it is asked.
type countingReader struct{ reads atomic.Int64 }

func (c *countingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	c.reads.Add(1)
	return apierrors.NewNotFound(schema.GroupResource{}, "")
}

func (c *countingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	c.reads.Add(1)
	return nil
}

// A review reads the API server first only for kinds whose policies can conflict: for one
// that never does, no stored policy could change the verdict.
func TestLiveReadsOnlyWhereAConflictIsPossible(t *testing.T) {
	store := readyStore(kinds.BuiltinKindTable(), withTopology(t))
	for name, tc := range map[string]struct {
		doc       string
		wantReads bool
	}{
		"BackendTLSPolicy (one per target)": {doc: btls("one"), wantReads: true},
		"OIDCPolicy (never conflicts)": {doc: `{"apiVersion": "extensions.kuadrant.io/v1alpha1", "kind": "OIDCPolicy",
			"metadata": {"name": "o", "namespace": "app"},
			"spec": {"targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r"}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			live := &countingReader{}
			obj := decodeJSON(t, tc.doc)
			gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
			require.NoError(t, err)
			gvk := gv.WithKind(obj["kind"].(string))
			row, ok := store.Row(gvk.GroupKind())
			require.True(t, ok)
			_, err = (&Reviewer{Store: store, Live: live}).Review(context.Background(), gvk,
				rules.Request{Operation: rules.Create, Policy: policy.NewPolicy(row, obj)}, false)
			require.NoError(t, err)
			assert.Equal(t, tc.wantReads, live.reads.Load() > 0, "reads: %d", live.reads.Load())
		})
	}
}
