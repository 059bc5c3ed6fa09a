package topology

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Gateway API route attachment, as the hierarchy needs it: a route attaches to a listener
// only if one of its parentRefs selects the listener (sectionName and/or port), the
// listener's allowedRoutes admit the route's namespace and kind, and their hostnames
// intersect. Contour's design calls the last one "domain match".

// attaches reports whether route attaches to listener l of owner (a Gateway or a
// ListenerSet).
func (w *walker) attaches(route, owner *Object, l ListenerInfo) bool {
	selected := false
	for p := range route.Route.ParentRefs() {
		if refSelects(p, owner, l) {
			selected = true
			break
		}
	}
	return selected && w.admits(route, owner, l)
}

// refSelects reports whether parentRef p selects listener l of owner: it names owner, and
// its sectionName and port, where set, are the listener's.
func refSelects(p ParentRef, owner *Object, l ListenerInfo) bool {
	return p.Key() == owner.Key() && (p.SectionName == "" || p.SectionName == l.Name) && (p.Port == 0 || p.Port == l.Port)
}

// admits reports whether listener l of owner admits route, once a parentRef selects it: by
// namespace, kind and hostname.
func (w *walker) admits(route, owner *Object, l ListenerInfo) bool {
	return w.namespaceAllowed(route.Namespace, owner.Namespace, l) &&
		kindAllowed(route, l) &&
		hostnamesIntersect(l.Hostname, route.Route.Hostnames)
}

// setAccepted reports whether Gateway gw accepts ListenerSet set: its allowedListeners
// admit the set's namespace (None, the default, admits none; Same its own; All every one;
// Selector those whose labels it selects). A ListenerSet not accepted adds no listeners,
// and routes attached to it reach nothing (Gateway API's ListenerSet, conformance
// ListenerSetAllowedListeners*).
func (w *walker) setAccepted(gw, set *Object) bool {
	switch gw.Gateway.ListenersFrom {
	case "All":
		return true
	case "Same":
		return set.Namespace == gw.Namespace
	case "Selector":
		return w.selects(gw.Gateway.ListenersSelector, set.Namespace)
	default:
		return false
	}
}

// acceptedParent returns the Gateway or ListenerSet key names (owner) and the Gateway it
// belongs to (itself, or the set's parent), when owner exists and, for a ListenerSet, its
// Gateway exists and accepts it: the parents a route's parentRef can attach it to.
func (w *walker) acceptedParent(key policy.TargetKey) (owner, gw *Object, ok bool) {
	owner, ok = w.snap.Object(key)
	if !ok || owner.Gateway == nil {
		return nil, nil, false
	}
	if owner.Gateway.Parent == nil {
		return owner, owner, true
	}
	gw, ok = w.snap.Object(*owner.Gateway.Parent)
	if !ok || gw.Gateway == nil || !w.setAccepted(gw, owner) {
		return nil, nil, false
	}
	return owner, gw, true
}

// AcceptedListenerSets returns the ListenerSets that name Gateway gw as their parent and
// that gw accepts.
func AcceptedListenerSets(snap Snapshot, gw *Object) []*Object {
	w := &walker{snap: snap}
	var out []*Object
	for _, set := range snap.ListenerSetsByGateway(gw.Key()) {
		if w.setAccepted(gw, set) {
			out = append(out, set)
		}
	}
	return out
}

// selects applies a namespace label selector to the labels of namespace ns.
func (w *walker) selects(selector map[string]any, ns string) bool {
	s, ok := parseSelector(selector)
	return ok && s.Matches(labels.Set(w.namespaceLabels(ns)))
}

// parseSelector reads a label selector from generic JSON.
func parseSelector(selector map[string]any) (labels.Selector, bool) {
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(selector, &sel); err != nil {
		return nil, false
	}
	s, err := metav1.LabelSelectorAsSelector(&sel)
	return s, err == nil
}

// setAcceptor is setAccepted for the ListenerSets of gw, with gw's namespace selector read
// once and each namespace's answer kept: judging a Gateway's listeners asks it of every
// ListenerSet of the Gateway.
func (w *walker) setAcceptor(gw *Object) func(set *Object) bool {
	if gw.Gateway.ListenersFrom != "Selector" {
		return func(set *Object) bool { return w.setAccepted(gw, set) }
	}
	sel, ok := parseSelector(gw.Gateway.ListenersSelector)
	answers := map[string]bool{}
	return func(set *Object) bool {
		if !ok {
			return false
		}
		a, known := answers[set.Namespace]
		if !known {
			a = sel.Matches(labels.Set(w.namespaceLabels(set.Namespace)))
			answers[set.Namespace] = a
		}
		return a
	}
}

// namespaceAllowed applies allowedRoutes.namespaces: Same (the default), All, or Selector
// against the labels of the route's Namespace.
func (w *walker) namespaceAllowed(routeNS, listenerNS string, l ListenerInfo) bool {
	switch l.From {
	case "All":
		return true
	case "Selector":
		return w.selects(l.Selector, routeNS)
	default:
		return routeNS == listenerNS
	}
}

func (w *walker) namespaceLabels(ns string) map[string]string {
	return NamespaceLabels(w.snap, ns)
}

// protocolRouteKinds are the route kinds a listener admits when allowedRoutes.kinds is
// empty, by protocol (Gateway API's defaults).
var protocolRouteKinds = map[string][]string{
	"HTTP":  {"HTTPRoute", "GRPCRoute"},
	"HTTPS": {"HTTPRoute", "GRPCRoute"},
	"TLS":   {"TLSRoute"},
	"TCP":   {"TCPRoute"},
	"UDP":   {"UDPRoute"},
}

func kindAllowed(route *Object, l ListenerInfo) bool {
	if len(l.Kinds) > 0 {
		for _, k := range l.Kinds {
			if k.Group == route.Group && k.Kind == route.Kind {
				return true
			}
		}
		return false
	}
	routeKinds, known := protocolRouteKinds[l.Protocol]
	return !known || slices.Contains(routeKinds, route.Kind)
}

// hostnamesIntersect is the "domain match": an empty side matches anything; otherwise two
// names match when equal, or when one is a wildcard `*.d` and the other (a precise name or
// a narrower wildcard) ends in `.d` with one or more labels before it (Gateway API's
// Listener.Hostname: "*.example.com" matches "foo.example.com" and "foo.bar.example.com";
// conformance HTTPRouteHostnameIntersection).
func hostnamesIntersect(listener string, routeHosts []string) bool {
	if listener == "" || len(routeHosts) == 0 {
		return true
	}
	for _, h := range routeHosts {
		if hostMatch(listener, h) || hostMatch(h, listener) {
			return true
		}
	}
	return false
}

func hostMatch(pattern, host string) bool {
	if pattern == host {
		return true
	}
	if !strings.HasPrefix(pattern, "*.") {
		return false
	}
	suffix := pattern[1:] // ".example.com"
	return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
}

// backendPermitted counts a backendRef into another namespace only with a ReferenceGrant
// there from the route (GEP-709).
func (w *walker) backendPermitted(route *Object, backend policy.TargetKey) bool {
	if backend.Namespace == route.Namespace {
		return true
	}
	return grantAdmits(w.snap, route.Group, route.Kind, route.Namespace, backend, nil)
}
