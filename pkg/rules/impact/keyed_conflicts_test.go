package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// The statuses the implementations' semantics give, where a row's data decides them: AWS's
// AccessLogPolicies apply together except one per destination type at a target (mode key),
// each at its own level; Envoy AI Gateway's QuotaPolicies that set one model's quota are
// settled by name (order nameFirst); a policy refused for a reference into another namespace
// without a grant applies nowhere.
func TestStatusesOfRowSemantics(t *testing.T) {
	const gateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: amazon-vpc-lattice
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec:
  parentRefs: [{name: gw}]
`
	accessLog := func(name, created, kind, target, arn string) string {
		return `
---
apiVersion: application-networking.k8s.aws/v1alpha1
kind: AccessLogPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + created + `"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: ` + kind + `, name: ` + target + `, namespace: app}
  destinationArn: "` + arn + `"`
	}
	const backend = `
apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIServiceBackend
metadata: {name: be-1, namespace: default}
spec: {schema: {name: OpenAI}, backendRef: {name: openai, kind: Backend, group: gateway.envoyproxy.io}}
`
	quota := func(name, created, model, limit string) string {
		return `
---
apiVersion: aigateway.envoyproxy.io/v1alpha1
kind: QuotaPolicy
metadata: {name: ` + name + `, namespace: default, creationTimestamp: "` + created + `"}
spec:
  targetRefs: [{group: aigateway.envoyproxy.io, kind: AIServiceBackend, name: be-1}]
  perModelQuotas:
  - modelName: ` + model + `
    quota: {defaultBucket: {limit: ` + limit + `, duration: 1m}}`
	}
	cases := map[string]struct {
		world string
		want  map[string]string
	}{
		"access logs of three types at one Gateway": {
			world: gateway +
				accessLog("bucket", "2024-01-01T00:00:00Z", "Gateway", "gw", "arn:aws:s3:::b") +
				accessLog("log-group", "2024-01-02T00:00:00Z", "Gateway", "gw", "arn:aws:logs:us-west-2:1:log-group:g") +
				accessLog("stream", "2024-01-03T00:00:00Z", "Gateway", "gw", "arn:aws:firehose:us-west-2:1:deliverystream/s"),
			want: map[string]string{"app/bucket": StatusEnforced, "app/log-group": StatusEnforced, "app/stream": StatusEnforced},
		},
		"a second bucket at one Gateway: the older stands": {
			world: gateway +
				accessLog("late-bucket", "2024-01-02T00:00:00Z", "Gateway", "gw", "arn:aws:s3:::b2") +
				accessLog("early-bucket", "2024-01-01T00:00:00Z", "Gateway", "gw", "arn:aws:s3:::b1"),
			want: map[string]string{"app/early-bucket": StatusEnforced, "app/late-bucket": StatusOverridden},
		},
		"a bucket at the Gateway and one at its route: each its own subscription": {
			world: gateway +
				accessLog("gateway-bucket", "2024-01-01T00:00:00Z", "Gateway", "gw", "arn:aws:s3:::b1") +
				accessLog("route-bucket", "2024-01-02T00:00:00Z", "HTTPRoute", "r1", "arn:aws:s3:::b2"),
			want: map[string]string{"app/gateway-bucket": StatusEnforced, "app/route-bucket": StatusEnforced},
		},
		"one model's quota twice: the first by name stands, whatever the ages": {
			world: backend +
				quota("policy-b", "2024-01-01T00:00:00Z", "gpt-4", "50") +
				quota("policy-a", "2024-01-02T00:00:00Z", "gpt-4", "10"),
			want: map[string]string{"default/policy-a": StatusEnforced, "default/policy-b": StatusOverridden},
		},
		"quotas of two models": {
			world: backend +
				quota("policy-b", "2024-01-01T00:00:00Z", "gpt-4", "50") +
				quota("policy-a", "2024-01-02T00:00:00Z", "gpt-4o-mini", "10"),
			want: map[string]string{"default/policy-a": StatusEnforced, "default/policy-b": StatusEnforced},
		},
		"a backend in another namespace without a grant": {
			world: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns1}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: ns1}
spec:
  parentRefs: [{name: gw}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: PayloadProcessor
metadata: {name: pp, namespace: ns1}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  processors:
  - type: ExtProcess
    extProcess: {backendRef: {name: ext-svc, namespace: ns2, port: 9000}}`,
			want: map[string]string{"ns1/pp": StatusOverridden},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			snap := rulestest.World(t, table, tc.world)
			assert.Equal(t, tc.want, statuses(snap, table))
		})
	}
}
