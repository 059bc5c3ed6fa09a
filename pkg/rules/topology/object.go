package topology

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/internal/intern"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Object is a target object as the rules see it.
type Object struct {
	Group, Kind, Namespace, Name string
	// labels are its labels, each key and value ended by a NUL (neither may hold one),
	// sorted by key, interned: most objects of a team repeat the same few sets.
	labels string
	// sections are the names of its listeners, rules or ports, each ended by a NUL (no name
	// holds one), interned: most routes, Gateways and Services repeat the same few lists,
	// which then cost no memory and no collector's work per object; a slice of names was one
	// more object per object for the collector to visit. hasSections says whether the kind
	// has sections at all. A GatewayClass has none: sections holds its controllerName
	// instead (ControllerName), which no route then pays a pointer word for.
	sections    string
	hasSections bool
	// Topology, parsed once: set for Gateways and ListenerSets, xRoutes, and backends.
	Gateway *GatewayInfo
	Route   *RouteInfo
	Service *ServiceInfo
}

// HasSection reports whether the object has a listener, rule or port of that name.
func (o *Object) HasSection(name string) bool {
	if !o.hasSections {
		return false
	}
	for rest := o.sections; rest != ""; {
		var s string
		s, rest, _ = strings.Cut(rest, "\x00")
		if s == name {
			return true
		}
	}
	return false
}

// HasSections reports whether the object's kind has sections (listeners, rules or ports).
func (o *Object) HasSections() bool { return o.hasSections }

// ControllerName is a GatewayClass's spec.controllerName: the controller that serves its
// Gateways ("" for any other kind).
func (o *Object) ControllerName() string {
	if o.hasSections {
		return ""
	}
	if info, _ := kinds.TargetInfoFor(o.GroupKind()); info.Role != kinds.RoleGatewayClass {
		return ""
	}
	return o.sections
}

// GroupKind of the object.
func (o *Object) GroupKind() schema.GroupKind { return schema.GroupKind{Group: o.Group, Kind: o.Kind} }

// Key returns the object's key.
func (o *Object) Key() policy.TargetKey {
	return policy.TargetKey{Group: o.Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// NewObject decodes a generic JSON object into an Object, collecting its section names and
// its topology. It keeps nothing of raw: a snapshot of thousands of routes must not hold
// their JSON twice.
func NewObject(group, kind string, raw map[string]any) *Object {
	meta, _ := raw["metadata"].(map[string]any)
	o := allocObject(schema.GroupKind{Group: group, Kind: kind})
	o.Group, o.Kind = intern.String(group), intern.String(kind)
	o.Namespace = intern.String(str(meta["namespace"]))
	o.Name, _ = meta["name"].(string)
	info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: group, Kind: kind})
	if set, ok := meta["labels"].(map[string]any); ok {
		o.labels = encodeLabels(set)
	}
	if info.SectionList != "" {
		o.hasSections = true
		spec, _ := raw["spec"].(map[string]any)
		items, _ := spec[info.SectionList].([]any)
		var names strings.Builder
		for _, item := range items {
			m, _ := item.(map[string]any)
			if name, ok := m["name"].(string); ok && name != "" && !strings.Contains(name, "\x00") && !o.HasSection(name) {
				names.WriteString(name)
				names.WriteByte(0)
				o.sections = names.String()
			}
		}
		o.sections = intern.String(o.sections)
	}
	o.parseTopology(raw)
	return o
}
