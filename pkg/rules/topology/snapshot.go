package topology

import (
	"iter"

	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Snapshot is the state of the cluster the rules read. Every lookup is by key or index;
// a rule never lists the world. pkg/index implements it; the webhook's store (pkg/clusterstate)
// keeps one fed by list and watch, `check` builds one from manifests.
type Snapshot interface {
	// Object returns a non-policy object (Gateway, HTTPRoute, Service...) by key (no section).
	Object(key policy.TargetKey) (*Object, bool)
	// PoliciesAt returns the policies of one kind attached at exactly key (object and
	// section): those whose references name it, then those whose selectors select it now
	// (AppendSelecting).
	PoliciesAt(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy
	// SelectingPolicies returns the policies of one kind that have target selectors.
	SelectingPolicies(kind schema.GroupKind) []*policy.Policy
	// ObjectsLabelled returns the objects of one kind, in every namespace, that carry the
	// label key with value.
	ObjectsLabelled(gk schema.GroupKind, key, value string) iter.Seq[*Object]
	// ObjectsOfKind returns every object of one kind (for a selector with no label to look
	// objects up by).
	ObjectsOfKind(gk schema.GroupKind) iter.Seq[*Object]
	// ReferenceGrants returns the ReferenceGrants in a namespace (v1 and v1beta1 alike).
	ReferenceGrants(namespace string) []*gatewayv1.ReferenceGrant

	// RoutesByParent returns the xRoutes with a parentRef naming a Gateway or ListenerSet.
	RoutesByParent(parent policy.TargetKey) iter.Seq[*Object]
	// RoutesByBackend returns the xRoutes with a backendRef naming a backend.
	RoutesByBackend(backend policy.TargetKey) iter.Seq[*Object]
	// GatewaysByClass returns the Gateways of a GatewayClass.
	GatewaysByClass(class string) []*Object
	// GatewaysInNamespace returns the Gateways in a namespace.
	GatewaysInNamespace(namespace string) []*Object
	// ListenerSetsByGateway returns the ListenerSets whose parentRef names a Gateway.
	ListenerSetsByGateway(gateway policy.TargetKey) []*Object
	// PoliciesIn returns the policies of one kind in a namespace.
	PoliciesIn(kind schema.GroupKind, namespace string) []*policy.Policy
}

// State is a snapshot that can also list what it holds, for whole-state views (`webhook
// explain`, the audit): a review never lists the world.
type State interface {
	Snapshot
	// Gateways returns every Gateway, ordered by namespace and name.
	Gateways() []*Object
	// Policies returns every policy, ordered by kind, namespace and name.
	Policies() []*policy.Policy
}
