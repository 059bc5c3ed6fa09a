// Package oracle judges generated scenarios by the webhook's engine and by an
// implementation's own code, and reports where they disagree.
//
// The implementation here is Envoy Gateway: its translator (`egctl x translate`, built from
// its Go module by hack/egctl.sh) computes, offline, the status a running Envoy Gateway
// writes on each policy: Accepted, or refused as Conflicted or Invalid, and Overridden or
// Merged where a more specific policy replaces or merges it. A seeded generator draws
// clusters over Envoy Gateway's kinds (Gateways and ListenerSets with listener hostnames and
// allowedRoutes, routes with named rules and parentRef sections, policies with targetRefs,
// sections, selectors, mergeType, in a creation order unrelated to their names); each
// policy is admitted by the offline door as a cluster with the webhook would admit it, in
// creation order, and the translator judges what such a cluster holds.
package oracle
