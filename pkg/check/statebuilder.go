package check

import (
	"github.com/policyattachment/webhook/pkg/crdvalidation"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
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
// documents use (Discover, or DiscoverKinds, for manifests that carry CRDs).
func NewStateBuilder(table *kinds.KindTable) *StateBuilder {
	return &StateBuilder{b: newBuilder(table)}
}

// Discover adds a row to the table for every CRD in docs labelled as a policy kind, and
// keeps every CRD in docs to judge the documents added once Judge is called.
func (s *StateBuilder) Discover(docs []manifests.Document) error {
	if _, err := discoverKinds(docs, s.b.table); err != nil {
		return err
	}
	return s.b.schemasFrom(docs)
}

// Judge makes Add do first what the API server does with each document whose CRD
// Discover kept: apply its defaults, and refuse what its schema or CEL rules refuse.
// Objects read from a cluster were judged when they were stored; manifests were not. A
// refused document is unusable input, or, with refused set, is told to refused and left
// out, as a cluster would not hold it.
func (s *StateBuilder) Judge(refused func(where string, refusal *crdvalidation.Refusal)) {
	s.b.judge, s.b.judgePolicies, s.b.onRefused = true, true, refused
}

// Add stores the batch's non-policy objects and keeps its policies, in document order.
func (s *StateBuilder) Add(docs []manifests.Document) error {
	policies, err := s.b.addAll(docs)
	s.policies = append(s.policies, policies...)
	return err
}

// Snapshot stores the kept policies in document order and returns the state. The builder
// is spent.
func (s *StateBuilder) Snapshot() *index.Snapshot { return s.store(nil) }

// SnapshotWithStatuses is Snapshot, with the statuses the controllers wrote into the
// policies read (what `audit` and `report` compare with the predictions), each from the
// policy's own document. The builder is spent.
func (s *StateBuilder) SnapshotWithStatuses() (*index.Snapshot, *impact.Observations) {
	observed := &impact.Observations{}
	return s.store(observed), observed
}

// store stores the kept policies in document order (a later document of one policy
// replacing an earlier one, its status too), recording their statuses in observed if set.
func (s *StateBuilder) store(observed *impact.Observations) *index.Snapshot {
	for _, pd := range s.policies {
		p := policy.NewPolicy(pd.row, pd.doc.Object)
		s.b.snap.PutPolicy(p)
		if observed != nil {
			observed.Add(p, pd.doc.Object)
		}
	}
	return s.b.snap
}
