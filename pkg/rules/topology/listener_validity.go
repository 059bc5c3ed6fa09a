package topology

import (
	"slices"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

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
