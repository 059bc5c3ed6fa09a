package topology

import (
	"cmp"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

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

// member is one listener of the merged list: its owner's place in Envoy Gateway's order of
// owners (eg) and in the spec's (spec), the Gateway first (0) in both.
type member struct {
	owner    *Object
	l        *ListenerInfo
	eg, spec int
	valid    bool
}

func (m member) ref() ListenerRef { return ListenerRef{Owner: m.owner, Name: m.l.Name} }

// judgeListeners judges, port by port, the listeners of gw and of its accepted ListenerSets.
func (w *walker) judgeListeners(gw *Object, sets []*Object, doubts bool) map[ListenerRef]ListenerConflict {
	egOrder := slices.Clone(sets)
	slices.SortFunc(egOrder, compareEnvoyGateway)
	specOrder := slices.Clone(sets)
	slices.SortFunc(specOrder, compareSpec)
	specRank := make(map[*Object]int, len(sets))
	for i, s := range specOrder {
		specRank[s] = i + 1
	}
	// Each port's members in Envoy Gateway's order, an owner's listeners together.
	byPort := map[int64][]member{}
	for eg, owner := range append([]*Object{gw}, egOrder...) {
		for i := range owner.Gateway.Listeners {
			l := &owner.Gateway.Listeners[i]
			byPort[l.Port] = append(byPort[l.Port], member{owner: owner, l: l, eg: eg, spec: specRank[owner], valid: w.certainlyValid(l)})
		}
	}
	out := map[ListenerRef]ListenerConflict{}
	for port, members := range byPort {
		if len(members) > 1 {
			judgePort(port, members, out)
			if doubts {
				doubtPort(port, members, out)
			}
		}
	}
	return out
}

// hostKey is what two listeners of one port must share to be alike: protocol and hostname.
type hostKey struct{ protocol, hostname string }

// judgePort marks the members of one port that lose, in one pass in Envoy Gateway's order,
// owner by owner: for each, the certainly valid listeners of the owners before it, the one
// first in the spec's order of each kind kept (what comes first in both orders then comes
// first in that one too).
func judgePort(port int64, members []member, out map[ListenerRef]ListenerConflict) {
	first := make(map[hostKey]member, len(members)) // alike listeners that may win (HostnameConflict)
	var firstHTTP *member         // HTTP listeners a TCP one loses to (ProtocolConflict)
	for i := 0; i < len(members); {
		j := i
		for j < len(members) && members[j].owner == members[i].owner {
			j++
		}
		block := members[i:j]
		var ownHTTP *member
		otherThanHTTP := false
		for k := range block {
			switch p := block[k].l.Protocol; {
			case p == "HTTP" && block[k].valid && ownHTTP == nil:
				ownHTTP = &block[k]
			case p != "HTTP" && p != "UDP":
				otherThanHTTP = true
			}
		}
		for _, x := range block {
			if y, ok := first[hostKey{x.l.Protocol, x.l.Hostname}]; ok && y.spec < x.spec {
				reason := ReasonHostnameConflict
				if x.l.Protocol != "HTTP" {
					reason = ReasonProtocolConflict
				}
				out[x.ref()] = ListenerConflict{Lost: true, With: y.ref(), Reason: reason, Port: port}
				continue
			}
			if x.l.Protocol != "TCP" {
				continue
			}
			if ownHTTP != nil {
				out[x.ref()] = ListenerConflict{Lost: true, With: ownHTTP.ref(), Reason: ReasonProtocolConflict, Port: port}
			} else if firstHTTP != nil && firstHTTP.spec < x.spec {
				out[x.ref()] = ListenerConflict{Lost: true, With: firstHTTP.ref(), Reason: ReasonProtocolConflict, Port: port}
			}
		}
		for k := range block {
			y := block[k]
			if !y.valid {
				continue
			}
			if y.l.Protocol == "HTTP" && (firstHTTP == nil || y.spec < firstHTTP.spec) {
				firstHTTP = &block[k]
			}
			if y.l.Protocol == "HTTP" && otherThanHTTP {
				continue
			}
			key := hostKey{y.l.Protocol, y.l.Hostname}
			if cur, ok := first[key]; !ok || y.spec < cur.spec {
				first[key] = y
			}
		}
		i = j
	}
}

// lostOne judges one listener l of owner (gw, or a ListenerSet gw accepts) as judgePort
// does, by a scan of gw's listeners that keeps nothing: a walk up from a route asks about
// the few listeners the route attaches to, and judging every listener of a Gateway that a
// thousand ListenerSets share, in every walk of a review, cost more than the rest of it.
func (w *walker) lostOne(gw, owner *Object, l *ListenerInfo) (ListenerConflict, bool) {
	_, alike := certainProtocols[l.Protocol]
	if !alike {
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

// surelyBefore reports whether the listeners of a (gw or one of its ListenerSets) come
// before those of b in both orders: the Gateway's before any ListenerSet's; a ListenerSet's
// before another's when Envoy Gateway's order and the spec's agree.
func surelyBefore(gw, a, b *Object) bool {
	switch {
	case a == b || b == gw:
		return false
	case a == gw:
		return true
	}
	return compareEnvoyGateway(a, b) < 0 && compareSpec(a, b) < 0
}

// compareOwners orders gw and its ListenerSets as the spec does.
func compareOwners(gw, a, b *Object) int {
	switch {
	case a == b:
		return 0
	case a == gw:
		return -1
	case b == gw:
		return 1
	}
	return compareSpec(a, b)
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

// protocolClass is a protocol as Envoy Gateway tells protocols apart on one port: HTTPS and
// TLS share theirs (validate.go getProtocolForListener).
func protocolClass(p string) string {
	if p == "HTTPS" || p == "TLS" {
		return "HTTPS/TLS"
	}
	return p
}

// doubtPort marks the members of one port, not already lost, that may lose by some reading:
// a listener other than UDP of the same owner, or of one that may come first (first in
// either order), with another protocol class or the same hostname. One pass in each order
// finds those of owners before; pairs of one owner are compared directly.
func doubtPort(port int64, members []member, out map[ListenerRef]ListenerConflict) {
	doubt := func(x, y member) {
		if _, decided := out[x.ref()]; !decided {
			out[x.ref()] = ListenerConflict{With: y.ref(), Reason: doubtReason(x, y), Port: port}
		}
	}
	for i := 0; i < len(members); { // members is in Envoy Gateway's order: an owner's together
		j := i
		for j < len(members) && members[j].owner == members[i].owner {
			j++
		}
		for _, x := range members[i:j] {
			for _, y := range members[i:j] {
				if x.l != y.l && mayConflict(x, y) {
					doubt(x, y)
				}
			}
		}
		i = j
	}
	pass := func(order []member, rank func(member) int) {
		var classes []member // the first listener of each protocol class seen
		hosts := map[string]member{}
		for i := 0; i < len(order); {
			j := i
			for j < len(order) && rank(order[j]) == rank(order[i]) {
				j++
			}
			for _, x := range order[i:j] {
				if x.l.Protocol == "UDP" {
					continue
				}
				if y, ok := hosts[x.l.Hostname]; ok {
					doubt(x, y)
				}
				for _, y := range classes {
					if protocolClass(y.l.Protocol) != protocolClass(x.l.Protocol) {
						doubt(x, y)
						break
					}
				}
			}
			for _, y := range order[i:j] {
				if y.l.Protocol == "UDP" {
					continue
				}
				if !slices.ContainsFunc(classes, func(c member) bool { return protocolClass(c.l.Protocol) == protocolClass(y.l.Protocol) }) {
					classes = append(classes, y)
				}
				if _, ok := hosts[y.l.Hostname]; !ok {
					hosts[y.l.Hostname] = y
				}
			}
			i = j
		}
	}
	pass(members, func(m member) int { return m.eg })
	bySpec := slices.Clone(members)
	slices.SortStableFunc(bySpec, func(a, b member) int { return cmp.Compare(a.spec, b.spec) })
	pass(bySpec, func(m member) int { return m.spec })
}

// mayConflict reports whether two listeners of one port may conflict by some reading: both
// other than UDP, of two protocol classes or with one hostname.
func mayConflict(x, y member) bool {
	return x.l.Protocol != "UDP" && y.l.Protocol != "UDP" &&
		(protocolClass(x.l.Protocol) != protocolClass(y.l.Protocol) || x.l.Hostname == y.l.Hostname)
}

func doubtReason(x, y member) string {
	if protocolClass(x.l.Protocol) != protocolClass(y.l.Protocol) {
		return ReasonProtocolConflict
	}
	return ReasonHostnameConflict
}

// certainProtocols are the protocols whose listeners are valid by what the webhook reads,
// with the route kinds each serves (Envoy Gateway v1.9.1 listener.go
// allowedRouteKindsForProtocol; validate.go validateAllowedRoutes refuses a listener that
// lists another kind, or another group). HTTPS and TLS listeners are valid only with
// certificates the webhook does not read.
var certainProtocols = map[string][]string{
	"HTTP": {"HTTPRoute", "GRPCRoute"},
	"TCP":  {"TCPRoute"},
	"UDP":  {"UDPRoute"},
}

// certainlyValid reports whether listener l is one every reading accepts when nothing
// conflicts with it: a protocol of certainProtocols on a port in range, no hostname for TCP
// and UDP, allowedRoutes kinds only those it serves, and a namespace selector (where from is
// Selector) that is there and parses (Envoy Gateway v1.9.1 validate.go
// validateAllowedNamespaces, validateHostName). A listener in conflict with one not
// certainly valid may win or lose: it is only Doubtful.
func (w *walker) certainlyValid(l *ListenerInfo) bool {
	served, ok := certainProtocols[l.Protocol]
	if !ok || l.Port < 1 || l.Port > 65535 || (l.Protocol != "HTTP" && l.Hostname != "") {
		return false
	}
	for _, k := range l.Kinds {
		if k.Group != kinds.GatewayGroup || !slices.Contains(served, k.Kind) {
			return false
		}
	}
	return l.From != "Selector" || selectorParses(l.Selector)
}

func selectorParses(selector map[string]any) bool {
	if selector == nil {
		return false
	}
	_, ok := parseSelector(selector)
	return ok
}

// compareEnvoyGateway orders ListenerSets as Envoy Gateway does: creationTimestamp, then
// namespace, then name (v1.9.1 internal/gatewayapi/resource/resource.go Sort).
func compareEnvoyGateway(a, b *Object) int {
	return cmp.Or(cmp.Compare(a.Gateway.Created, b.Gateway.Created),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// compareSpec orders ListenerSets as the spec does: creationTimestamp, then
// "{namespace}/{name}" alphabetically.
func compareSpec(a, b *Object) int {
	if c := cmp.Compare(a.Gateway.Created, b.Gateway.Created); c != 0 {
		return c
	}
	return compareJoined(a.Namespace, a.Name, b.Namespace, b.Name)
}

// compareJoined compares ns1+"/"+n1 with ns2+"/"+n2 without building either.
func compareJoined(ns1, n1, ns2, n2 string) int {
	at := func(ns, n string, i int) (byte, bool) {
		switch {
		case i < len(ns):
			return ns[i], true
		case i == len(ns):
			return '/', true
		case i-len(ns)-1 < len(n):
			return n[i-len(ns)-1], true
		}
		return 0, false
	}
	for i := 0; ; i++ {
		a, okA := at(ns1, n1, i)
		b, okB := at(ns2, n2, i)
		switch {
		case !okA && !okB:
			return 0
		case !okA:
			return -1
		case !okB:
			return 1
		case a != b:
			return cmp.Compare(a, b)
		}
	}
}
