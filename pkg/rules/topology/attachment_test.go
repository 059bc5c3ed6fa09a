package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func TestHostMatch(t *testing.T) {
	cases := []struct {
		listener string
		routes   []string
		want     bool
	}{
		{"", []string{"a.example.com"}, true},
		{"a.example.com", nil, true},
		{"a.example.com", []string{"a.example.com"}, true},
		{"*.example.com", []string{"a.example.com"}, true},
		{"a.example.com", []string{"*.example.com"}, true},
		// A wildcard matches one or more labels (Gateway API Listener.Hostname; conformance
		// HTTPRouteHostnameIntersection: "*.wildcard.io" admits "foo.bar.wildcard.io").
		{"*.example.com", []string{"a.b.example.com"}, true},
		{"*.io", []string{"*.toystore.io"}, true},
		{"*.foo.example.com", []string{"*.example.com"}, true},
		{"foo.example.com", []string{"*.bar.example.com"}, false},
		{"*.example.com", []string{"aexample.com"}, false},
		{"*.example.com", []string{"example.com"}, false},
		{"*.example.com", []string{"*.example.com"}, true},
		{"*.example.com", []string{"*.other.com", "b.example.com"}, true},
		{"a.example.com", []string{"b.example.com"}, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, hostnamesIntersect(tc.listener, tc.routes), "%q vs %q", tc.listener, tc.routes)
	}
}

func TestKindAllowedByProtocol(t *testing.T) {
	route := func(kind string) *Object { return &Object{Group: kinds.GatewayGroup, Kind: kind} }
	assert.True(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "HTTPS"}))
	assert.True(t, kindAllowed(route("GRPCRoute"), ListenerInfo{Protocol: "HTTP"}))
	assert.False(t, kindAllowed(route("TCPRoute"), ListenerInfo{Protocol: "HTTP"}))
	assert.True(t, kindAllowed(route("TLSRoute"), ListenerInfo{Protocol: "TLS"}))
	assert.True(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "example.com/QUIC"}), "unknown protocols admit any kind")
	assert.False(t, kindAllowed(route("HTTPRoute"), ListenerInfo{Protocol: "HTTP", Kinds: []RouteKind{{kinds.GatewayGroup, "GRPCRoute"}}}))
}
