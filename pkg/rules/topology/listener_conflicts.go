package topology

import "github.com/policyattachment/webhook/pkg/rules/policy"

// Listener conflicts across a Gateway and the ListenerSets it accepts.
//
// Gateway API treats a Gateway as having one merged list of listeners: its own, then those of
// the ListenerSets it accepts, ListenerSets ordered by creationTimestamp (oldest first), then
// by "{namespace}/{name}" (apis/v1 listenerset_types.go ListenerSetSpec.Listeners, v1.7.0).
// Of listeners that are not distinct, the first in that order is accepted and the others are
// Conflicted and not Accepted (GEP-1713 "Listener and ListenerSet Conflicts"; conformance
// ListenerSetHostnameConflict and ListenerSetProtocolConflict). A listener not accepted
// carries no traffic, so it is on no context path.
//
// Envoy Gateway decides it its own way (v1.9.1 internal/gatewayapi/validate.go
// validateConflictedProtocolsListeners, validateConflictedHostnameListeners and
// validateConflictedLayer4Listeners; the ListenerSets' order in resource/resource.go Sort):
// a listener whose spec it finds invalid (an HTTPS certificate it cannot load, a route kind
// it does not serve) takes part in no conflict, so the next one wins; HTTPS and TLS
// listeners of one port and hostname conflict; one protocol per port, HTTP against HTTPS
// too, and no winner among a Gateway's own listeners, nor among a ListenerSet's; ties of
// creationTimestamp go by namespace, then name. So a listener here loses (Lost) only where
// the spec and Envoy Gateway agree that it does, whatever the webhook cannot see:
//
//   - HostnameConflict: it has the port, protocol and hostname (none on both is the same) of
//     a listener of another Gateway or ListenerSet that comes first for certain and is
//     certainly valid (certainlyValid). When they are HTTP, that one's own Gateway or
//     ListenerSet has no listener of another protocol (UDP aside) on the port: Envoy Gateway
//     lets no listener of such a ListenerSet decide the port's protocol, and the spec does
//     not say who wins then. TCP and UDP listeners have no hostname: one port, one listener
//     (Envoy Gateway's reason for these is ProtocolConflict).
//   - ProtocolConflict: it is TCP, on the port of a certainly valid HTTP listener of its own
//     Gateway or ListenerSet, or of one that comes first for certain. The spec: a TCP
//     listener and an HTTP, HTTPS or TLS one on one port are not distinct and not accepted
//     (the first wins across ListenerSets); an implementation without TCP accepts no TCP
//     listener anyway.
//
// "Comes first for certain": the Gateway's own listeners come before any ListenerSet's; a
// ListenerSet's before another's when it is older or, created in the same second, when both
// orders of the names put it first: the spec's "{namespace}/{name}" and Envoy Gateway's
// namespace, then name ("team-a/x" and "team/y" are ordered one way by each).
//
// Where a listener may lose but the readings differ (an HTTP one with the port and hostname
// of one that may be invalid, one beside an HTTPS or a TCP listener, the Gateway's own HTTP
// and TCP listeners on one port) it stays on its paths and is only Doubtful: a rule that
// denies a policy for what one served listener shares with others (WholeHTTPPorts) counts
// only listeners neither lost nor doubtful, so that a doubt never makes a denial.

// Reasons a listener loses, as Gateway API names them for the Conflicted condition.
const (
	ReasonHostnameConflict = "HostnameConflict"
	ReasonProtocolConflict = "ProtocolConflict"
)

// ListenerRef names one listener: the Gateway or ListenerSet that lists it, and its name.
type ListenerRef struct {
	Owner *Object
	Name  string
}

// Listener returns the listener r names.
func (r ListenerRef) Listener() (ListenerInfo, bool) {
	if r.Owner == nil || r.Owner.Gateway == nil {
		return ListenerInfo{}, false
	}
	for _, l := range r.Owner.Gateway.Listeners {
		if l.Name == r.Name {
			return l, true
		}
	}
	return ListenerInfo{}, false
}

// ListenerConflict is how a listener fares against the others of its Gateway.
type ListenerConflict struct {
	// Lost: it is not accepted, by the spec and by Envoy Gateway alike. Otherwise it is
	// Doubtful: it may lose, depending on what the readings or the webhook cannot decide.
	Lost bool
	// With is the listener it loses to (Lost), or one it may lose to.
	With ListenerRef
	// Reason is ReasonHostnameConflict or ReasonProtocolConflict.
	Reason string
	// Port is the port they share.
	Port int64
}

// ListenerConflicts returns the listeners of Gateway gw, and of the ListenerSets it accepts,
// that lose a listener conflict or may; a listener not in it has no conflict.
func ListenerConflicts(snap Snapshot, gw *Object) map[ListenerRef]ListenerConflict {
	w := &walker{snap: snap}
	return w.judge(gw, true)
}

// LostListener returns the conflict a listener named by key (a Gateway or ListenerSet and a
// sectionName) loses, if it loses one: then no route reaches anything through it.
func LostListener(snap Snapshot, key policy.TargetKey) (ListenerConflict, bool) {
	if key.Section == "" {
		return ListenerConflict{}, false
	}
	w := &walker{snap: snap}
	owner, gw, ok := w.acceptedParent(key.Object())
	if !ok {
		return ListenerConflict{}, false
	}
	for i := range owner.Gateway.Listeners {
		if l := &owner.Gateway.Listeners[i]; l.Name == key.Section {
			return w.lostOne(gw, owner, l)
		}
	}
	return ListenerConflict{}, false
}

// lost reports whether listener l of owner (gw or one of its ListenerSets) loses: from the
// judgement of all gw's listeners where the walk made one (judgeAll), else by lostOne.
func (w *walker) lost(gw, owner *Object, l *ListenerInfo) bool {
	if m, ok := w.conflicts[gw]; ok {
		c, found := m[ListenerRef{Owner: owner, Name: l.Name}]
		return found && c.Lost
	}
	_, lost := w.lostOne(gw, owner, l)
	return lost
}

// judgeAll judges, once per walk, which of gw's listeners lose, for a walk that visits them
// all (no doubts: a walk drops only what is lost).
func (w *walker) judgeAll(gw *Object) {
	if _, done := w.conflicts[gw]; done || gw.Gateway == nil {
		return
	}
	if m := w.judge(gw, false); m != nil {
		if w.conflicts == nil {
			w.conflicts = map[*Object]map[ListenerRef]ListenerConflict{}
		}
		w.conflicts[gw] = m
	}
}

// judge judges gw's merged listeners: which lose, and with doubts which may.
func (w *walker) judge(gw *Object, doubts bool) map[ListenerRef]ListenerConflict {
	if gw.Gateway == nil {
		return nil
	}
	sets := w.snap.ListenerSetsByGateway(gw.Key())
	if len(sets) == 0 && !sharePort(gw.Gateway.Listeners) {
		return nil // the common case, without allocating: nothing to conflict with
	}
	var accepted []*Object
	accepts := w.setAcceptor(gw)
	for _, set := range sets {
		if set.Gateway != nil && accepts(set) {
			accepted = append(accepted, set)
		}
	}
	return w.judgeListeners(gw, accepted, doubts)
}

func sharePort(ls []ListenerInfo) bool {
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			if ls[i].Port == ls[j].Port {
				return true
			}
		}
	}
	return false
}

// lostOne judges one listener l of owner (gw, or a ListenerSet gw accepts) as judgePort
// does, by a scan of gw's listeners that keeps nothing: a walk up from a route asks about
// the few listeners the route attaches to, and judging every listener of a Gateway that a
// thousand ListenerSets share, in every walk of a review, cost more than the rest of it.
func (w *walker) lostOne(gw, owner *Object, l *ListenerInfo) (ListenerConflict, bool) {
	_, alike := certainProtocols[l.Protocol]
	if !alike || (owner != gw && !w.setAccepted(gw, owner)) { // judgeAll judges no other
		return ListenerConflict{}, false
	}
	var first, firstHTTP ListenerConflict // as judgePort's: the candidate first in the spec's order
	consider := func(best *ListenerConflict, c ListenerConflict) {
		if best.With.Owner == nil || compareOwners(gw, c.With.Owner, best.With.Owner) < 0 {
			*best = c
		}
	}
	check := func(c *Object) {
		if c == owner || c.Gateway == nil || !surelyBefore(gw, c, owner) {
			return
		}
		for i := range c.Gateway.Listeners {
			y := &c.Gateway.Listeners[i]
			sameKind := y.Protocol == l.Protocol && y.Hostname == l.Hostname
			if y.Port != l.Port || !(sameKind || (l.Protocol == "TCP" && y.Protocol == "HTTP")) || !w.certainlyValid(y) {
				continue
			}
			if c != gw && !w.setAccepted(gw, c) { // asked of the few ListenerSets with a candidate
				return
			}
			ref := ListenerRef{Owner: c, Name: y.Name}
			if sameKind && (y.Protocol != "HTTP" || !otherThanHTTP(c, l.Port)) {
				reason := ReasonHostnameConflict
				if l.Protocol != "HTTP" {
					reason = ReasonProtocolConflict
				}
				consider(&first, ListenerConflict{Lost: true, With: ref, Reason: reason, Port: l.Port})
			}
			if l.Protocol == "TCP" && y.Protocol == "HTTP" {
				consider(&firstHTTP, ListenerConflict{Lost: true, With: ref, Reason: ReasonProtocolConflict, Port: l.Port})
			}
		}
	}
	check(gw)
	for _, set := range w.snap.ListenerSetsByGateway(gw.Key()) {
		check(set)
	}
	if first.Lost {
		return first, true
	}
	if l.Protocol == "TCP" {
		for i := range owner.Gateway.Listeners {
			if y := &owner.Gateway.Listeners[i]; y.Port == l.Port && y.Protocol == "HTTP" && w.certainlyValid(y) {
				return ListenerConflict{Lost: true, With: ListenerRef{Owner: owner, Name: y.Name}, Reason: ReasonProtocolConflict, Port: l.Port}, true
			}
		}
	}
	return firstHTTP, firstHTTP.Lost
}

// otherThanHTTP reports whether owner lists a listener on port of a protocol other than HTTP
// and UDP: then none of its HTTP listeners there is sure to win (judgePort).
func otherThanHTTP(owner *Object, port int64) bool {
	for _, y := range owner.Gateway.Listeners {
		if y.Port == port && y.Protocol != "HTTP" && y.Protocol != "UDP" {
			return true
		}
	}
	return false
}
