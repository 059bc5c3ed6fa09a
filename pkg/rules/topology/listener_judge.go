package topology

import (
	"cmp"
	"slices"
)

// Judging every listener of a Gateway at once (ListenerConflicts, judgeAll): port by port,
// in one pass in Envoy Gateway's order of owners for who loses, and in both orders for who
// may.

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
	// first: alike listeners that may win (HostnameConflict); firstHTTP: the HTTP listener a
	// TCP one loses to (ProtocolConflict).
	first := make(map[hostKey]member, len(members))
	var firstHTTP *member
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
