package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidateWholeHTTPPorts denies, for a kind whose row says WholeHTTPPorts, a target that
// covers some but not all of the plain-HTTP listeners sharing a port. The implementation
// serves those listeners as one (one Envoy listener: Envoy Gateway v1.9.1
// internal/gatewayapi/clienttrafficpolicy.go validatePortOverlapForClientTrafficPolicy,
// helpers.go listenersWithSameHTTPPort) and refuses such a policy as Invalid. A target
// covers: a listener (a section) itself; a whole ListenerSet its listeners; a whole Gateway
// its own listeners and those of its ListenerSets (they are named under it). The listeners
// that count are those the implementation certainly serves (it finds the overlap among the
// listeners it builds): the Gateway's and those of the ListenerSets it accepts, but none that
// loses a listener conflict or may (topology.ListenerConflicts: a doubt counts as not
// served, so that it never makes a denial). HTTPS listeners have their own filter chains and
// never count.
func ValidateWholeHTTPPorts(p *policy.Policy, snap topology.Snapshot, msgs *Messages) field.ErrorList {
	if !p.Row.WholeHTTPPorts {
		return nil
	}
	var errs field.ErrorList
	for _, t := range topology.Targets(snap, p) {
		info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: t.Key.Group, Kind: t.Key.Kind})
		if info.Role != kinds.RoleGateway && info.Role != kinds.RoleListenerSet || !servedAt(snap, p, t.Key) {
			continue
		}
		owner, ok := snap.Object(t.Key.Object())
		if !ok || owner.Gateway == nil {
			continue
		}
		gw := owner
		if owner.Gateway.Parent != nil {
			if gw, ok = snap.Object(*owner.Gateway.Parent); !ok || gw.Gateway == nil {
				continue
			}
		}
		served := servedHTTPListeners(snap, gw)
		covers := func(l servedListener) bool {
			switch {
			case t.Key.Section != "":
				return l.owner == owner && l.Name == t.Key.Section
			case owner == gw:
				return true
			default:
				return l.owner == owner
			}
		}
		if e := sharedPort(t, served, covers, msgs, p); e != nil {
			errs = append(errs, e)
		}
	}
	return withReason(ReasonInvalidTargetRef, errs...)
}

// servedListener is a plain-HTTP listener a Gateway serves, and the Gateway or ListenerSet
// it comes from.
type servedListener struct {
	topology.ListenerInfo
	owner *topology.Object
}

// servedHTTPListeners lists the plain-HTTP listeners gw certainly serves: its own, then
// those of the ListenerSets it accepts, but none in a listener conflict it loses or may.
func servedHTTPListeners(snap topology.Snapshot, gw *topology.Object) []servedListener {
	var out []servedListener
	conflicts := topology.ListenerConflicts(snap, gw)
	for _, owner := range append([]*topology.Object{gw}, topology.AcceptedListenerSets(snap, gw)...) {
		for _, l := range owner.Gateway.Listeners {
			if _, inConflict := conflicts[topology.ListenerRef{Owner: owner, Name: l.Name}]; l.Protocol != "HTTP" || inConflict {
				continue
			}
			out = append(out, servedListener{ListenerInfo: l, owner: owner})
		}
	}
	return out
}

// sharedPort returns the denial of target t, or nil: the first served listener it covers
// that shares its port with a served one it does not.
func sharedPort(t topology.Target, served []servedListener, covers func(servedListener) bool, msgs *Messages, p *policy.Policy) *field.Error {
	for _, l := range served {
		if !covers(l) {
			continue
		}
		for _, m := range served {
			if covers(m) || m.Port != l.Port {
				continue
			}
			return field.Forbidden(t.Path, fmt.Sprintf(
				"%s listener %q shares port %d with plain-HTTP listener %q of %s, which this target does not cover; the implementation serves plain-HTTP listeners on one port as one, and refuses a %s that covers some of them: target what covers them all, or give the listeners their own ports",
				msgs.Target(l.owner.Key(), false, p.Namespace), policy.Echo(l.Name), l.Port, policy.Echo(m.Name),
				msgs.Target(m.owner.Key(), false, p.Namespace), p.Row.Kind))
		}
	}
	return nil
}
