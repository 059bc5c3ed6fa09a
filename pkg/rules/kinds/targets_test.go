package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Gateway API's XBackend (GEP-4894) is a backend a route may name and a policy may target;
// kube-agentic-networking's kind of the same name stays its own.
func TestXBackendTargets(t *testing.T) {
	gw, ok := TargetInfoFor(schema.GroupKind{Group: XGatewayGroup, Kind: "XBackend"})
	require.True(t, ok)
	assert.Equal(t, TargetInfo{Group: XGatewayGroup, Kind: "XBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend}, gw)
	kan, ok := TargetInfoFor(schema.GroupKind{Group: "agentic.networking.x-k8s.io", Kind: "XBackend"})
	require.True(t, ok)
	assert.Equal(t, TargetInfo{Group: "agentic.networking.x-k8s.io", Kind: "XBackend", Scope: Namespaced, Role: RoleBackend, Level: LevelBackend, Section: SubBackend}, kan)
	assert.NotContains(t, ReadKinds(), gw.GroupKind(), "not read from the cluster: its CRD is experimental")
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]schema.GroupKind{
		"XBackend":                              {Group: XGatewayGroup, Kind: "XBackend"},
		"xbackends":                             {Group: XGatewayGroup, Kind: "XBackend"},
		"XBackend.gateway.networking.x-k8s.io":  {Group: XGatewayGroup, Kind: "XBackend"},
		"xbackends.agentic.networking.x-k8s.io": {Group: "agentic.networking.x-k8s.io", Kind: "XBackend"},
		"HTTPRoute":                             {Group: GatewayGroup, Kind: "HTTPRoute"},
		"httproutes.policy.linkerd.io":          {Group: "policy.linkerd.io", Kind: "HTTPRoute"},
		"svc":                                   {Kind: "Service"},
	} {
		got, err := ParseKind(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got.GroupKind(), in)
		}
	}

	// Each name once, though two groups have an XBackend and an HTTPRoute.
	_, err := ParseKind("xbackend.example.io")
	assert.EqualError(t, err, `unknown kind "xbackend.example.io"; one of AIServiceBackend, AgentgatewayBackend, Backend, GRPCRoute, Gateway, GatewayClass, HTTPRoute, Hostname, InferencePool, ListenerSet, Namespace, Server, Service, ServiceEntry, ServiceExport, ServiceImport, TCPRoute, TLSRoute, UDPRoute, XBackend, XListenerSet`)
}
