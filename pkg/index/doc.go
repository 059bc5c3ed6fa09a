// Package index is the in-memory, indexed snapshot the rules read (topology.Snapshot):
// objects by key, routes by parent and by backend, Gateways by class and namespace,
// policies by attachment point and by namespace, ReferenceGrants by namespace. It is built
// for the collector as much as for lookups: keys are hashed to pointer-free words
// (keyhash.go), the route indexes are linked slot lists in one pointer-free slice
// (slot_index.go), a lone policy at an attachment point is named by its slot instead of a
// list of its own (policies.go), and stored policies are compact copies. Pure: it imports no
// client-go, no controller-runtime, no net/http.
package index
