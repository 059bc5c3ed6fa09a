package conformance

import (
	"errors"
	"fmt"
	"strings"
)

// The helpers of conformance/utils/kubernetes whose assertions are about attachment, and
// how each one's arguments read as facts. The arguments are those of the helper's
// signature at the pinned version; a helper whose signature changes reads as unread (an
// argument of the wrong shape), never as a wrong fact.

const kubernetesUtils = ConformanceModule + "/utils/kubernetes"

// conditionAccepted is the condition type of attachment (RouteConditionAccepted,
// ListenerSetConditionAccepted).
const conditionAccepted = "Accepted"

// facts collects what one test's assertions say.
type facts struct {
	test *Test
	at   string
	// other counts the assertions of another condition type.
	other int
}

type readFunc func(f *facts, call string, args []any) error

var helpers = map[string]readFunc{
	// GatewayAndRoutesMustBeAccepted(t, c, timeouts, controller, gw, routeType, usePort, routes...)
	"GatewayAndRoutesMustBeAccepted": func(f *facts, call string, a []any) error {
		if len(a) < 7 {
			return errArgs
		}
		kind, err := routeKind(a[5])
		if err != nil {
			return err
		}
		return f.allAccepted(a[4], "Gateway", kind, a[7:])
	},
	"GatewayAndHTTPRoutesMustBeAccepted": acceptedBy("HTTPRoute"),
	"GatewayAndTCPRoutesMustBeAccepted":  acceptedBy("TCPRoute"),
	"GatewayAndUDPRoutesMustBeAccepted":  acceptedBy("UDPRoute"),
	"GatewayAndTLSRoutesMustBeAccepted":  acceptedBy("TLSRoute"),
	// RoutesAndParentMustBeAccepted(t, c, timeouts, controller, resource, routeType, routes...)
	"RoutesAndParentMustBeAccepted": func(f *facts, call string, a []any) error {
		if len(a) < 6 {
			return errArgs
		}
		kind, err := routeKind(a[5])
		if err != nil {
			return err
		}
		return f.allAccepted(a[4], "Gateway", kind, a[6:])
	},
	"HTTPRouteMustHaveParents": parentsOf("HTTPRoute", 3, 4),
	"TCPRouteMustHaveParents":  parentsOf("TCPRoute", 3, 4),
	"UDPRouteMustHaveParents":  parentsOf("UDPRoute", 3, 4),
	// RouteMustHaveParents(t, c, timeouts, route, parents, namespaceRequired, routeType)
	"RouteMustHaveParents": func(f *facts, call string, a []any) error {
		if len(a) < 7 {
			return errArgs
		}
		kind, err := routeKind(a[6])
		if err != nil {
			return err
		}
		return parentsOf(kind, 3, 4)(f, call, a)
	},
	"HTTPRouteMustHaveCondition":         conditionFor("HTTPRoute"),
	"TCPRouteMustHaveCondition":          conditionFor("TCPRoute"),
	"UDPRouteMustHaveCondition":          conditionFor("UDPRoute"),
	"TLSRouteMustHaveCondition":          conditionFor("TLSRoute"),
	"GRPCRouteMustHaveCondition":         conditionFor("GRPCRoute"),
	"HTTPRouteMustHaveNoAcceptedParents": noAcceptedParents("HTTPRoute"),
	"TLSRouteMustHaveNoAcceptedParents":  noAcceptedParents("TLSRoute"),
	"UDPRouteMustHaveNoAcceptedParents":  noAcceptedParents("UDPRoute"),
	"TCPRouteMustHaveNoAcceptedParents":  noAcceptedParents("TCPRoute"),
	// GatewayStatusMustHaveListeners(t, c, timeouts, gw, []ListenerStatus)
	"GatewayStatusMustHaveListeners":     listenersOf("Gateway"),
	"ListenerSetStatusMustHaveListeners": listenersOf("ListenerSet"),
	// GatewayMustHaveZeroRoutes(t, c, timeouts, gw): no listener has a route.
	"GatewayMustHaveZeroRoutes": func(f *facts, call string, a []any) error {
		if len(a) < 4 {
			return errArgs
		}
		gw, err := namespacedName(a[3], "Gateway")
		if err != nil {
			return err
		}
		f.test.Listeners = append(f.test.Listeners, ListenerFact{At: f.at, Parent: gw})
		return nil
	},
	// ListenerSetMustHaveCondition(t, c, timeouts, listenerSet, condition)
	"ListenerSetMustHaveCondition": func(f *facts, call string, a []any) error {
		if len(a) < 5 {
			return errArgs
		}
		ls, err := namespacedName(a[3], "ListenerSet")
		if err != nil {
			return err
		}
		typ, accepted, reason, err := condition(a[4])
		if err != nil || typ != conditionAccepted {
			return f.notAttachment(err)
		}
		f.test.ListenerSets = append(f.test.ListenerSets, ListenerSetFact{At: f.at, ListenerSet: ls, Accepted: accepted, Reason: reason})
		return nil
	},
	// GatewayMustHaveAttachedListeners(t, c, timeouts, gw, count): AttachedListenerSets.
	"GatewayMustHaveAttachedListeners": func(f *facts, call string, a []any) error {
		if len(a) < 5 {
			return errArgs
		}
		gw, err := namespacedName(a[3], "Gateway")
		if err != nil {
			return err
		}
		n, err := integer(a[4])
		if err != nil {
			return err
		}
		f.test.Gateways = append(f.test.Gateways, GatewayFact{At: f.at, Gateway: gw, AttachedListenerSets: n})
		return nil
	},
}

var errArgs = errors.New("fewer arguments than the helper takes")

// errOther marks an assertion of a condition other than Accepted.
var errOther = errors.New("not about attachment")

func (f *facts) notAttachment(err error) error {
	if err != nil {
		return err
	}
	return errOther
}

// acceptedBy reads GatewayAnd<Kind>sMustBeAccepted(t, c, timeouts, controller, gw, routes...).
func acceptedBy(kind string) readFunc {
	return func(f *facts, call string, a []any) error {
		if len(a) < 5 {
			return errArgs
		}
		return f.allAccepted(a[4], "Gateway", kind, a[5:])
	}
}

// allAccepted records that each route is Accepted by the parent a GatewayRef or ResourceRef
// names, through each of its listener names (the helper expects one status per name).
func (f *facts) allAccepted(parent any, defaultKind, routeKind string, routes []any) error {
	refs, err := parentRefs(parent, defaultKind)
	if err != nil {
		return err
	}
	for _, r := range routes {
		route, err := namespacedName(r, routeKind)
		if err != nil {
			return err
		}
		for _, p := range refs {
			f.test.Routes = append(f.test.Routes, RouteFact{At: f.at, Route: route, Parent: &p, Accepted: true, Reason: "Accepted"})
		}
	}
	return nil
}

// parentsOf reads <Kind>MustHaveParents(t, c, timeouts, route, []RouteParentStatus, ...).
func parentsOf(kind string, routeArg, parentsArg int) readFunc {
	return func(f *facts, call string, a []any) error {
		if len(a) <= parentsArg {
			return errArgs
		}
		route, err := namespacedName(a[routeArg], kind)
		if err != nil {
			return err
		}
		statuses, err := list(a[parentsArg])
		if err != nil {
			return err
		}
		read := false
		for _, s := range statuses {
			st, ok := s.(*structV)
			if !ok {
				return fmt.Errorf("a parent status is %s", describe(s))
			}
			parent, err := parentReference(st.field("ParentRef"), route.Namespace)
			if err != nil {
				return err
			}
			conds, err := list(st.field("Conditions"))
			if err != nil {
				return err
			}
			for _, c := range conds {
				typ, accepted, reason, err := condition(c)
				if err != nil {
					return err
				}
				if typ == conditionAccepted {
					f.test.Routes = append(f.test.Routes, RouteFact{At: f.at, Route: route, Parent: &parent, Accepted: accepted, Reason: reason})
					read = true
				}
			}
		}
		if !read {
			return errOther
		}
		return nil
	}
}

// conditionFor reads <Kind>MustHaveCondition(t, c, timeouts, route, parent, condition): the
// helper matches the route's status entries by the parent's name and namespace alone.
func conditionFor(kind string) readFunc {
	return func(f *facts, call string, a []any) error {
		if len(a) < 6 {
			return errArgs
		}
		route, err := namespacedName(a[3], kind)
		if err != nil {
			return err
		}
		parent, err := namespacedName(a[4], "")
		if err != nil {
			return err
		}
		typ, accepted, reason, err := condition(a[5])
		if err != nil || typ != conditionAccepted {
			return f.notAttachment(err)
		}
		f.test.Routes = append(f.test.Routes, RouteFact{At: f.at, Route: route, Parent: &parent, Accepted: accepted, Reason: reason})
		return nil
	}
}

// noAcceptedParents reads <Kind>MustHaveNoAcceptedParents(t, c, timeouts, route).
func noAcceptedParents(kind string) readFunc {
	return func(f *facts, call string, a []any) error {
		if len(a) < 4 {
			return errArgs
		}
		route, err := namespacedName(a[3], kind)
		if err != nil {
			return err
		}
		f.test.Routes = append(f.test.Routes, RouteFact{At: f.at, Route: route})
		return nil
	}
}

// listenersOf reads <Kind>StatusMustHaveListeners(t, c, timeouts, parent, []ListenerStatus).
func listenersOf(kind string) readFunc {
	return func(f *facts, call string, a []any) error {
		if len(a) < 5 {
			return errArgs
		}
		parent, err := namespacedName(a[3], kind)
		if err != nil {
			return err
		}
		listeners, err := list(a[4])
		if err != nil {
			return err
		}
		var out []ListenerFact
		for _, l := range listeners {
			st, ok := l.(*structV)
			if !ok {
				return fmt.Errorf("a listener status is %s", describe(l))
			}
			name, err := text(st.field("Name"))
			if err != nil {
				return err
			}
			n, err := integer(st.field("AttachedRoutes"))
			if err != nil {
				return err
			}
			out = append(out, ListenerFact{At: f.at, Parent: parent, Listener: name, AttachedRoutes: n})
		}
		f.test.Listeners = append(f.test.Listeners, out...)
		return nil
	}
}

// parentRefs reads a kubernetes.GatewayRef or ResourceRef: one parent reference per
// listener name it holds ("" for none).
func parentRefs(v any, defaultKind string) ([]Ref, error) {
	st, ok := v.(*structV)
	if !ok {
		return nil, fmt.Errorf("the parent is %s", describe(v))
	}
	nn, err := namespacedName(st, defaultKind)
	if err != nil {
		return nil, err
	}
	if gk, ok := st.field("GroupKind").(*structV); ok {
		if nn.Kind, err = text(gk.field("Kind")); err != nil {
			return nil, err
		}
	}
	names := st.field("listenerNames")
	if names == nil {
		names = st.field("ListenerNames")
	}
	sections, err := list(names)
	if err != nil {
		return nil, err
	}
	if len(sections) == 0 {
		return []Ref{nn}, nil
	}
	var refs []Ref
	for _, s := range sections {
		r := nn
		if r.SectionName, err = text(s); err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// parentReference reads a gatewayv1.ParentReference with the API's defaults: kind
// Gateway, the route's namespace.
func parentReference(v any, routeNS string) (Ref, error) {
	st, ok := v.(*structV)
	if !ok {
		return Ref{}, fmt.Errorf("the parentRef is %s", describe(v))
	}
	var r Ref
	var err error
	for _, f := range []struct {
		field string
		into  *string
	}{{"Kind", &r.Kind}, {"Namespace", &r.Namespace}, {"Name", &r.Name}, {"SectionName", &r.SectionName}} {
		if *f.into, err = text(st.field(f.field)); err != nil {
			return Ref{}, fmt.Errorf("parentRef.%s: %w", f.field, err)
		}
	}
	if r.Port, err = integer(st.field("Port")); err != nil {
		return Ref{}, fmt.Errorf("parentRef.Port: %w", err)
	}
	if r.Kind == "" {
		r.Kind = "Gateway"
	}
	if r.Namespace == "" {
		r.Namespace = routeNS
	}
	return r, nil
}

// condition reads a metav1.Condition: its type, whether its status is True, its reason.
func condition(v any) (typ string, isTrue bool, reason string, err error) {
	st, ok := v.(*structV)
	if !ok {
		return "", false, "", fmt.Errorf("the condition is %s", describe(v))
	}
	if typ, err = text(st.field("Type")); err != nil {
		return "", false, "", fmt.Errorf("condition type: %w", err)
	}
	status, err := text(st.field("Status"))
	if err != nil {
		return "", false, "", fmt.Errorf("condition status: %w", err)
	}
	if status != "True" && status != "False" {
		return "", false, "", fmt.Errorf("condition status %q", status)
	}
	if reason, err = text(st.field("Reason")); err != nil {
		return "", false, "", fmt.Errorf("condition reason: %w", err)
	}
	return typ, status == "True", reason, nil
}

// namespacedName reads a types.NamespacedName (or a value embedding one) as a Ref.
func namespacedName(v any, kind string) (Ref, error) {
	st, ok := v.(*structV)
	if !ok {
		return Ref{}, fmt.Errorf("a name is %s", describe(v))
	}
	ns, err := text(st.field("Namespace"))
	if err != nil {
		return Ref{}, fmt.Errorf("namespace: %w", err)
	}
	name, err := text(st.field("Name"))
	if err != nil {
		return Ref{}, fmt.Errorf("name: %w", err)
	}
	if name == "" {
		return Ref{}, errors.New("a name is empty")
	}
	return Ref{Kind: kind, Namespace: ns, Name: name}, nil
}

// routeKind reads a route type argument (&gatewayv1.GRPCRoute{}).
func routeKind(v any) (string, error) {
	if st, ok := v.(*structV); ok && strings.HasSuffix(st.typ, "Route") {
		return st.typ, nil
	}
	return "", fmt.Errorf("the route type is %s", describe(v))
}

func text(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("a text is %s", describe(v))
}

func integer(v any) (int64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	}
	return 0, fmt.Errorf("a number is %s", describe(v))
}

func list(v any) ([]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	}
	return nil, fmt.Errorf("a list is %s", describe(v))
}

// describe says what a value the reader did not expect is, for Unread.Why.
func describe(v any) string {
	switch v := v.(type) {
	case unknown:
		return "known only when the test runs"
	case *structV:
		return "a " + v.typ
	case nil:
		return "unset"
	}
	return fmt.Sprintf("%T", v)
}
