package kinds

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group names used by the hierarchy.
const (
	GatewayGroup  = "gateway.networking.k8s.io"
	CoreGroup     = ""
	MultiCluster  = "multicluster.x-k8s.io"
	XGatewayGroup = "gateway.networking.x-k8s.io"
	CertManager   = "cert-manager.io"
	ListenerField = "listeners"
)

// Role is the place a target kind takes in the GEP-713 hierarchy. The hierarchy walk, the
// route attachment and the object parser read a kind's role, never its name.
type Role string

const (
	RoleGatewayClass Role = "GatewayClass"
	RoleNamespace    Role = "Namespace"
	RoleGateway      Role = "Gateway"
	RoleListenerSet  Role = "ListenerSet"
	RoleRoute        Role = "Route"
	RoleBackend      Role = "Backend"
)

// TargetInfo is what the engine knows about a kind that policies target: whether it is
// namespaced, its place in the GEP-713 hierarchy, and where its named sections live.
type TargetInfo struct {
	Group, Kind string
	Scope       Scope
	Role        Role
	// Level orders the hierarchy; lower numbers are less specific (higher).
	Level int
	// SectionList is the spec field holding the named sections (listeners, rules, ports),
	// and Section what a targetRef's sectionName selects there.
	SectionList string
	Section     SectionKind
	// OwnNamespaceOnly marks the Namespace kind: cluster-scoped, yet a namespaced policy may
	// target the namespace it lives in (GEP-713 Experimental, "Inherited Policy Attachment").
	OwnNamespaceOnly bool
	// Generic offers the kind as a target to policy kinds known only from their CRD label.
	Generic bool
	// Watched says `webhook serve` lists and watches the kind (and the shipped ClusterRole
	// grants it). GatewayClasses are, for the controller that serves their Gateways.
	Watched bool
	// ShortNames are the CRD's or the API's short names, which kubectl accepts for the kind.
	ShortNames []string
}

// GroupKind of the target kind.
func (t TargetInfo) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: t.Group, Kind: t.Kind}
}

// Hierarchy levels (GEP-713: GatewayClass > Gateway > Listener > xRoute > RouteRule >
// Backend > ServicePort, with Namespace optionally above Gateway).
const (
	LevelGatewayClass = 0
	LevelNamespace    = 10
	LevelGateway      = 20
	LevelListenerSet  = 30
	LevelRoute        = 40
	LevelBackend      = 50
)

// targetKinds is the one table of targetable kinds, in the order messages list them.
// Unknown kinds (virtual types, GEP-713 "Targeting virtual types") are treated as
// namespaced backends, with no sections.
var targetKinds = []TargetInfo{
	{Group: GatewayGroup, Kind: "GatewayClass", Scope: Cluster, Role: RoleGatewayClass, Level: LevelGatewayClass, Generic: true, Watched: true, ShortNames: []string{"gc"}},
	{Group: CoreGroup, Kind: "Namespace", Scope: Cluster, Role: RoleNamespace, Level: LevelNamespace, OwnNamespaceOnly: true, Watched: true, ShortNames: []string{"ns"}},
	{Group: GatewayGroup, Kind: "Gateway", Scope: Namespaced, Role: RoleGateway, Level: LevelGateway, SectionList: ListenerField, Section: Listener, Generic: true, Watched: true, ShortNames: []string{"gtw"}},
	{Group: GatewayGroup, Kind: "ListenerSet", Scope: Namespaced, Role: RoleListenerSet, Level: LevelListenerSet, SectionList: ListenerField, Section: Listener, Generic: true, Watched: true},
	{Group: GatewayGroup, Kind: "HTTPRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute, SectionList: "rules", Section: RouteRule, Generic: true, Watched: true},
	{Group: GatewayGroup, Kind: "GRPCRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute, SectionList: "rules", Section: RouteRule, Generic: true, Watched: true},
	{Group: GatewayGroup, Kind: "TLSRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute, SectionList: "rules", Section: RouteRule, Generic: true, Watched: true},
	{Group: GatewayGroup, Kind: "TCPRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute, SectionList: "rules", Section: RouteRule, Generic: true, Watched: true},
	{Group: GatewayGroup, Kind: "UDPRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute, SectionList: "rules", Section: RouteRule, Generic: true, Watched: true},
	{Group: CoreGroup, Kind: "Service", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, SectionList: "ports", Section: ServicePort, Generic: true, Watched: true, ShortNames: []string{"svc"}},
	{Group: MultiCluster, Kind: "ServiceImport", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, SectionList: "ports", Section: ServicePort, Watched: true},
	// Gateway API's own backend (GEP-4894, Experimental; apisx/v1alpha1/xbackend_types.go at
	// v1.6.3 and v1.7.0): routes name it in backendRefs (v1.7.0 apis/v1/object_reference_types.go,
	// experimental CEL "Must not have port for Backend reference" for group
	// gateway.networking.x-k8s.io, kind XBackend), and XBackendTrafficPolicy may target it as
	// an "implementation-specific backendRef". One port of its own, no named sections. Not
	// read from the cluster, like the kinds below: its CRD ships in the experimental channel only.
	{Group: XGatewayGroup, Kind: "XBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	// Kinds only some implementations target. The webhook does not read them from the
	// cluster (no RBAC, no watch: their CRDs are often absent), so a policy on one is judged
	// by its own fields and its neighbours there, never warned about as TargetNotFound.
	{Group: XGatewayGroup, Kind: "XListenerSet", Scope: Namespaced, Role: RoleListenerSet, Level: LevelListenerSet, SectionList: ListenerField, Section: Listener},
	{Group: "inference.networking.k8s.io", Kind: "InferencePool", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	{Group: "aigateway.envoyproxy.io", Kind: "AIServiceBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	{Group: "gateway.kgateway.dev", Kind: "Backend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	{Group: "agentgateway.dev", Kind: "AgentgatewayBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, Section: SubBackend},
	{Group: "networking.istio.io", Kind: "ServiceEntry", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, Section: ServicePort},
	{Group: "networking.istio.io", Kind: "Hostname", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	{Group: "policy.linkerd.io", Kind: "Server", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	// The AWS Gateway API controller's multi-cluster export of a Service (TargetGroupPolicy
	// targets it: aws/aws-application-networking-k8s v2.1.3 pkg/k8s/policyhelper/kind.go).
	{Group: "application-networking.k8s.aws", Kind: "ServiceExport", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend},
	// kube-agentic-networking's backend (XAccessPolicy targets it: v0.1.0
	// api/v0alpha0, pkg/controller/accesspolicy.go isXBackendTargetRef).
	// A sectionName on it is accepted and ignored by the implementation: any name, unchecked.
	{Group: "agentic.networking.x-k8s.io", Kind: "XBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, Section: SubBackend},
	{Group: "policy.linkerd.io", Kind: "HTTPRoute", Scope: Namespaced, Role: RoleRoute, Level: LevelRoute},
}

var targetInfos = func() map[schema.GroupKind]TargetInfo {
	m := make(map[schema.GroupKind]TargetInfo, len(targetKinds))
	for _, t := range targetKinds {
		m[t.GroupKind()] = t
	}
	return m
}()

// TargetInfoFor returns what is known of a target kind; an unknown kind reads as a
// namespaced backend.
func TargetInfoFor(gk schema.GroupKind) (TargetInfo, bool) {
	t, ok := targetInfos[gk]
	if !ok {
		return TargetInfo{Group: gk.Group, Kind: gk.Kind, Scope: Namespaced, Level: LevelBackend}, false
	}
	return t, true
}

// IsTargetKind reports whether objects of gk belong in a snapshot as possible targets.
func IsTargetKind(gk schema.GroupKind) bool {
	_, ok := targetInfos[gk]
	return ok
}

// TargetKinds returns the table of targetable kinds, in order. Callers must not change it.
func TargetKinds() []TargetInfo { return targetKinds }

// genericTargets are what a discovered policy kind may target.
func genericTargets() []TargetKind {
	var out []TargetKind
	for _, t := range targetKinds {
		if t.Generic {
			out = append(out, TargetKind{Group: t.Group, Kind: t.Kind, Section: t.Section})
		}
	}
	return out
}

// ReferenceGrant is the one non-target kind the rules read.
var ReferenceGrant = schema.GroupKind{Group: GatewayGroup, Kind: "ReferenceGrant"}

// ReadKinds are the non-policy kinds `webhook serve` lists and watches: the watched target
// kinds and ReferenceGrant.
func ReadKinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, t := range targetKinds {
		if t.Watched {
			out = append(out, t.GroupKind())
		}
	}
	return append(out, ReferenceGrant)
}

// IsNamespacedResource reports whether objects of a non-policy kind live in namespaces.
func IsNamespacedResource(gk schema.GroupKind) bool {
	if gk == ReferenceGrant {
		return true
	}
	info, _ := TargetInfoFor(gk)
	return info.Scope == Namespaced
}

// servedVersions are the API versions of the non-policy kinds the rules read, by group. An
// object of a known group at another version is bad input, not silently ignored.
var servedVersions = map[string][]string{
	CoreGroup:              {"v1"},
	GatewayGroup:           {"v1", "v1beta1", "v1alpha2", "v1alpha3"},
	"apiextensions.k8s.io": {"v1"},
}

// ServedVersion reports whether the group is one the rules read non-policy objects from
// (known), and whether it serves version.
func ServedVersion(group, version string) (known, served bool) {
	versions, known := servedVersions[group]
	if !known {
		return false, false
	}
	for _, v := range versions {
		if v == version {
			return true, true
		}
	}
	return true, false
}

// Depth is where a context path ends, from the Gateway down to a Service port.
// GatewayClass and Namespace sit above the Gateway and are attachment points only.
type Depth int

const (
	DepthGateway Depth = iota
	DepthListener
	DepthRoute
	DepthRule
	DepthBackend
	DepthPort
)

// effectiveDepths maps each effectiveTarget a row may name to where its paths end.
var effectiveDepths = map[string]Depth{
	"Gateway": DepthGateway, "Listener": DepthListener,
	"HTTPRoute": DepthRoute, "GRPCRoute": DepthRoute, "Route": DepthRoute,
	"RouteRule": DepthRule,
	"Service":   DepthBackend, "ServiceImport": DepthBackend, "Backend": DepthBackend,
	"ServicePort": DepthPort,
}

// PathDepth returns the depth at which the kind's context paths end; Inherited kinds
// without an effectiveTarget end at the route rule, the most specific level Gateway API
// routes traffic by.
func (r *KindRow) PathDepth() Depth {
	if d, ok := effectiveDepths[r.EffectiveTarget]; ok {
		return d
	}
	return DepthRule
}

func effectiveTargetNames() []string {
	out := make([]string, 0, len(effectiveDepths))
	for name := range effectiveDepths {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Noun names a section kind in messages.
func (s SectionKind) Noun() string {
	switch s {
	case Listener:
		return "listener"
	case RouteRule:
		return "route rule"
	case ServicePort:
		return "Service port"
	case SubBackend:
		return "sub-backend"
	}
	return "section"
}

// ParseKind finds a targetable kind by its name, case-insensitively, for command lines.
// Where two groups have a kind of one name (XBackend, HTTPRoute), the bare name is the first
// in the table (Gateway API's); KIND.GROUP, as kubectl writes it (`XBackend.agentic.networking.x-k8s.io`,
// `xbackends.agentic.networking.x-k8s.io`), picks the other.
func ParseKind(name string) (TargetInfo, error) {
	kind, group, qualified := strings.Cut(name, ".")
	var names []string
	for _, t := range targetKinds {
		if (!qualified || t.Group == group) && (strings.EqualFold(t.Kind, kind) || strings.EqualFold(plural(t.Kind), kind) || slices.Contains(t.ShortNames, strings.ToLower(kind))) {
			return t, nil
		}
		if !slices.Contains(names, t.Kind) {
			names = append(names, t.Kind)
		}
	}
	sort.Strings(names)
	return TargetInfo{}, fmt.Errorf("unknown kind %q; one of %s", name, strings.Join(names, ", "))
}

// plural is a kind's resource name, as its CRD or API names it.
func plural(kind string) string {
	lower := strings.ToLower(kind)
	if strings.HasSuffix(lower, "s") {
		return lower + "es"
	}
	return lower + "s"
}
