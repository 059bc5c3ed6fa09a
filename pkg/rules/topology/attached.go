package topology

import "github.com/policyattachment/webhook/pkg/rules/policy"

// Route attachment as Gateway API reports it in status: per parentRef of a route, the
// listeners that accept it (the route's Accepted condition for that parent), and per
// listener, how many routes it has (ListenerStatus.AttachedRoutes). The walk decides with
// the same rules (attachment.go); these name the answers the Gateway API conformance tests
// check (test/conformance).
//
// Unlike the walk, these count a listener that loses a listener conflict
// (listener_conflicts.go): status reports attachment, not traffic. "A Route MAY attach to a
// conflicted ListenerSet" (GEP-1713), and Envoy Gateway counts a route on a conflicted
// listener in AttachedRoutes and reports it Accepted there, building nothing for it (v1.9.1
// internal/gatewayapi/route.go processHTTPRouteParentRefListener).

// ParentAttachment is where one parentRef of a route attaches.
type ParentAttachment struct {
	Ref ParentRef
	// Listeners are the names of the parent's listeners the parentRef selects and that
	// admit the route, in the parent's order. None: the parent does not accept the route
	// through this parentRef (it is not there, it is a ListenerSet its Gateway does not
	// accept, or no listener is selected and admits the route).
	Listeners []string
}

// RouteAttachments returns, for each parentRef of route in order, the listeners it attaches
// the route to. A parentRef naming a Gateway reaches only the Gateway's own listeners, one
// naming a ListenerSet only the set's (Gateway API ListenerSet).
func RouteAttachments(snap Snapshot, route *Object) []ParentAttachment {
	if route.Route == nil {
		return nil
	}
	w := &walker{snap: snap}
	var out []ParentAttachment
	for p := range route.Route.ParentRefs() {
		a := ParentAttachment{Ref: p}
		if owner, _, ok := w.acceptedParent(p.Key()); ok {
			for _, l := range owner.Gateway.Listeners {
				if refSelects(p, owner, l) && w.admits(route, owner, l) {
					a.Listeners = append(a.Listeners, l.Name)
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// AttachedRoutes counts, for each listener of owner (a Gateway or a ListenerSet), the routes
// attached to it. A route counts once per listener however many of its parentRefs select
// that listener; a ListenerSet its Gateway does not accept has none.
func AttachedRoutes(snap Snapshot, owner *Object) map[string]int {
	counts := map[string]int{}
	if owner.Gateway == nil {
		return counts
	}
	for _, l := range owner.Gateway.Listeners {
		counts[l.Name] = 0
	}
	w := &walker{snap: snap}
	if _, _, ok := w.acceptedParent(owner.Key()); !ok {
		return counts
	}
	seen := map[policy.TargetKey]bool{}
	for route := range snap.RoutesByParent(owner.Key()) {
		if seen[route.Key()] {
			continue
		}
		seen[route.Key()] = true
		for _, l := range owner.Gateway.Listeners {
			if w.attaches(route, owner, l) {
				counts[l.Name]++
			}
		}
	}
	return counts
}
