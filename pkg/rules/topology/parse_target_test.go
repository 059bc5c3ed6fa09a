package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

func TestParseTargetIn(t *testing.T) {
	gw := policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "infra", Name: "gw"}
	route := policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "app", Name: "store"}
	for _, tc := range []struct {
		in, namespace string
		want          policy.TargetKey
		err           string
	}{
		{in: "Gateway/infra/gw", want: gw},
		{in: "gateway/infra/gw", namespace: "app", want: gw},
		{in: "gateways/gw", namespace: "infra", want: gw},
		{in: "gtw/gw", namespace: "infra", want: gw},
		{in: "httproute/store", namespace: "app", want: route},
		{in: "httproutes/app/store", want: route},
		{in: "gc/eg", want: policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "GatewayClass", Name: "eg"}},
		{in: "gatewayclasses/eg", want: policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "GatewayClass", Name: "eg"}},
		{in: "svc/app/b1", want: policy.TargetKey{Kind: "Service", Namespace: "app", Name: "b1"}},
		// Two groups have an XBackend: the bare name is Gateway API's, KIND.GROUP the other.
		{in: "XBackend/app/b", want: policy.TargetKey{Group: "gateway.networking.x-k8s.io", Kind: "XBackend", Namespace: "app", Name: "b"}},
		{in: "xbackends.agentic.networking.x-k8s.io/b", namespace: "app", want: policy.TargetKey{Group: "agentic.networking.x-k8s.io", Kind: "XBackend", Namespace: "app", Name: "b"}},
		{in: "httproutes.gateway.networking.k8s.io/app/store", want: route},
		{in: "httproute/store", err: `"httproute/store": use HTTPRoute/NAME (with -n NAMESPACE) or HTTPRoute/NAMESPACE/NAME`},
		{in: "gc/ns/eg", err: `"gc/ns/eg": GatewayClass is cluster-scoped; use GatewayClass/NAME`},
		{in: "pods/app/p", err: `"pods/app/p": unknown kind "pods"; one of `},
	} {
		got, err := ParseTargetIn(tc.in, tc.namespace)
		if tc.err != "" {
			if assert.Error(t, err, tc.in) {
				assert.Contains(t, err.Error(), tc.err, tc.in)
			}
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}
