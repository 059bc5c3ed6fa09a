package rules

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group names used by the hierarchy.
const (
	GatewayGroup  = "gateway.networking.k8s.io"
	CoreGroup     = ""
	MultiCluster  = "multicluster.x-k8s.io"
	CertManager   = "cert-manager.io"
	ListenerField = "listeners"
)

// TargetInfo is what the engine knows about a kind that policies target: whether it is
// namespaced, its level in the GEP-713 hierarchy, and where its named sections live.
type TargetInfo struct {
	Scope Scope
	// Level orders the hierarchy; lower numbers are less specific (higher).
	Level int
	// SectionList is the spec field holding the named sections (listeners, rules, ports).
	SectionList string
	// OwnNamespaceOnly marks the Namespace kind: cluster-scoped, yet a namespaced policy may
	// target the namespace it lives in (GEP-713 Experimental, "Inherited Policy Attachment").
	OwnNamespaceOnly bool
}

// Hierarchy levels (GEP-713: GatewayClass > Gateway > Listener > xRoute > RouteRule >
// Backend > ServicePort, with Namespace optionally above Gateway). Sections sit one step
// below the object that holds them.
const (
	LevelGatewayClass = 0
	LevelNamespace    = 10
	LevelGateway      = 20
	LevelListenerSet  = 30
	LevelRoute        = 40
	LevelBackend      = 50
	sectionStep       = 5
)

// targetInfos is the data table of targetable kinds. Unknown kinds (virtual types, GEP-713
// "Targeting virtual types") are treated as namespaced, with no sections.
var targetInfos = map[schema.GroupKind]TargetInfo{
	{Group: GatewayGroup, Kind: "GatewayClass"}:  {Scope: Cluster, Level: LevelGatewayClass},
	{Group: CoreGroup, Kind: "Namespace"}:        {Scope: Cluster, Level: LevelNamespace, OwnNamespaceOnly: true},
	{Group: GatewayGroup, Kind: "Gateway"}:       {Scope: Namespaced, Level: LevelGateway, SectionList: ListenerField},
	{Group: GatewayGroup, Kind: "ListenerSet"}:   {Scope: Namespaced, Level: LevelListenerSet, SectionList: ListenerField},
	{Group: GatewayGroup, Kind: "HTTPRoute"}:     {Scope: Namespaced, Level: LevelRoute, SectionList: "rules"},
	{Group: GatewayGroup, Kind: "GRPCRoute"}:     {Scope: Namespaced, Level: LevelRoute, SectionList: "rules"},
	{Group: GatewayGroup, Kind: "TLSRoute"}:      {Scope: Namespaced, Level: LevelRoute, SectionList: "rules"},
	{Group: GatewayGroup, Kind: "TCPRoute"}:      {Scope: Namespaced, Level: LevelRoute, SectionList: "rules"},
	{Group: GatewayGroup, Kind: "UDPRoute"}:      {Scope: Namespaced, Level: LevelRoute, SectionList: "rules"},
	{Group: CoreGroup, Kind: "Service"}:          {Scope: Namespaced, Level: LevelBackend, SectionList: "ports"},
	{Group: MultiCluster, Kind: "ServiceImport"}: {Scope: Namespaced, Level: LevelBackend, SectionList: "ports"},
}

// TargetInfoFor returns what is known of a target kind.
func TargetInfoFor(gk schema.GroupKind) (TargetInfo, bool) {
	t, ok := targetInfos[gk]
	if !ok {
		return TargetInfo{Scope: Namespaced, Level: LevelBackend}, false
	}
	return t, true
}

// IsTargetKind reports whether objects of gk belong in a Snapshot as possible targets.
func IsTargetKind(gk schema.GroupKind) bool {
	_, ok := targetInfos[gk]
	return ok
}

// ParseTarget reads KIND/NAMESPACE/NAME (KIND/NAME for cluster-scoped kinds) into a key;
// KIND is any targetable kind known to the hierarchy.
func ParseTarget(s string) (TargetKey, error) {
	parts := strings.Split(s, "/")
	var kinds []string
	for gk, info := range targetInfos {
		kinds = append(kinds, gk.Kind)
		if !strings.EqualFold(gk.Kind, parts[0]) {
			continue
		}
		switch {
		case info.Scope == Cluster && len(parts) == 2 && parts[1] != "":
			return TargetKey{Group: gk.Group, Kind: gk.Kind, Name: parts[1]}, nil
		case info.Scope == Namespaced && len(parts) == 3 && parts[1] != "" && parts[2] != "":
			return TargetKey{Group: gk.Group, Kind: gk.Kind, Namespace: parts[1], Name: parts[2]}, nil
		case info.Scope == Cluster:
			return TargetKey{}, fmt.Errorf("%q: %s is cluster-scoped; use %s/NAME", s, gk.Kind, gk.Kind)
		default:
			return TargetKey{}, fmt.Errorf("%q: use %s/NAMESPACE/NAME", s, gk.Kind)
		}
	}
	sort.Strings(kinds)
	return TargetKey{}, fmt.Errorf("%q: unknown kind %q; one of %s", s, parts[0], strings.Join(kinds, ", "))
}
