// Package oracle judges generated scenarios by the webhook's engine and by an
// implementation's own code, and reports where they disagree.
//
// The implementation here is Envoy Gateway: its translator (`egctl x translate`, built from
// its Go module by hack/oracles/egctl.sh) computes, offline, the status a running Envoy Gateway
// writes on each policy: Accepted, or refused as Conflicted or Invalid, and Overridden or
// Merged where a more specific policy replaces or merges it. A seeded generator draws
// clusters over Envoy Gateway's kinds (Gateways and ListenerSets with listener hostnames and
// allowedRoutes, routes with named rules and parentRef sections, policies with targetRefs,
// sections, selectors, mergeType, in a creation order unrelated to their names); each
// policy is admitted by the offline door as a cluster with the webhook would admit it, in
// creation order, and the translator judges what such a cluster holds.
//
// Most clusters are mixed: another implementation's GatewayClass (Istio's or NGINX's) and a
// Gateway of it sit beside Envoy Gateway's, and routes, ListenerSets and policies name
// either or both. Envoy Gateway loads only its own classes' Gateways and writes no status on
// a policy it reaches only through others; the webhook says NotServed there and judges no
// conflict. egctl translates the Gateways of the last GatewayClass in its input, whatever
// its controllerName, so Envoy Gateway's class always comes last.
package oracle
