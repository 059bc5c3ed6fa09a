// Package clusterstate is the webhook's view of the cluster: a Store holding an
// index.Snapshot, kept in step with the API server by a list-then-watch feed per kind
// (Feeds; policy CRDs are discovered from their label, also while running); the Reviewer,
// which judges a write in one pass (a live read where the store may be behind, then
// rules.Evaluate under the store's read lock, then the reservation that keeps two replicas'
// reviews in flight from both admitting a conflict); and ReadCluster, the paged read of a
// whole cluster for `webhook audit`.
package clusterstate
