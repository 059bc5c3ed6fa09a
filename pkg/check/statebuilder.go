package check

import (
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// StateBuilder builds the state that documents arriving in batches describe (a page of a
// cluster's List, a file's documents), as State does for documents held at once: every
// non-policy object is stored as its batch arrives and its generic JSON dropped; the
// policies are kept, and stored after everything else when Snapshot is called. A cluster of
// 100,000 routes is then never held as generic JSON at once (about 10 KB a route with ten
// rules), only its policies are.
type StateBuilder struct {
	b        *builder
	policies []pendingPolicy
}

// NewStateBuilder starts an empty state. The table must already hold every policy kind the
// documents use (DiscoverKinds for manifests that carry CRDs).
func NewStateBuilder(table *kinds.KindTable) *StateBuilder {
	return &StateBuilder{b: newBuilder(table)}
}

// DiscoverKinds adds a row to table for every CRD in docs labelled as a policy kind that
// the table does not already describe.
func DiscoverKinds(docs []manifests.Document, table *kinds.KindTable) error {
	return discoverKinds(docs, table)
}

// Add stores the batch's non-policy objects and keeps its policies, in document order.
func (s *StateBuilder) Add(docs []manifests.Document) error {
	policies, err := s.b.addAll(docs)
	s.policies = append(s.policies, policies...)
	return err
}

// Snapshot stores the kept policies in document order and returns the state. The builder
// is spent.
func (s *StateBuilder) Snapshot() *index.Snapshot {
	for _, pd := range s.policies {
		s.b.snap.PutPolicy(policy.NewPolicy(pd.row, pd.doc.Object))
	}
	return s.b.snap
}
