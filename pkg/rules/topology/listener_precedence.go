package topology

import (
	"cmp"
	"strings"
)

// Which of two listeners of one Gateway comes first (listener_conflicts.go): the Gateway's
// own, then ListenerSets by creationTimestamp, then by name, in the spec's order of names
// and in Envoy Gateway's.

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
