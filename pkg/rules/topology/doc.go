// Package topology is the GEP-713 hierarchy as the rules walk it: the target objects
// (Gateways, ListenerSets, routes, Services) parsed once into what the walk reads, Gateway API
// route attachment (parentRefs, allowedRoutes, hostnames, ReferenceGrants for backends), and
// the context paths from a Gateway down to an effective target. Every lookup goes through
// the Snapshot interface, by key or index, so the work grows with the paths found, never
// with the cluster.
package topology
