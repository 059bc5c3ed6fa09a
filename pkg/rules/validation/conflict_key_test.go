package validation_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// accessLogPolicy is an AccessLogPolicy in app on Gateway app/gw sending logs to arn.
func accessLogPolicy(name, arn string) string {
	return `
apiVersion: application-networking.k8s.aws/v1alpha1
kind: AccessLogPolicy
metadata: {name: ` + name + `, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: app}
  destinationArn: "` + arn + `"`
}

const accessLogGateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: amazon-vpc-lattice
  listeners: [{name: http, protocol: HTTP, port: 80}]`

// Mode key: the AWS Gateway API controller accepts one AccessLogPolicy per target and
// destination type (Lattice's ConflictException, accesslogpolicy_controller.go
// reconcileUpsert: Conflicted); the type is the AWS service in destinationArn.
func TestValidateConflictsByKey(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const bucket = "arn:aws:s3:::access-log-bucket"
	cases := map[string]struct {
		existing string
		policy   string
		want     field.ErrorList
	}{
		"second S3 destination": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("second", "arn:aws:s3:::other-bucket"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonConflicted,
				`Gateway app/gw already has AccessLogPolicy app/first with the same destination type ("s3", from `+"`destinationArn`"+`); AccessLogPolicy allows one policy per target, section and destination type (the first wins)`)},
		},
		"same bucket in another partition is still S3": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("second", "arn:aws-cn:s3:::access-log-bucket"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonConflicted,
				`Gateway app/gw already has AccessLogPolicy app/first with the same destination type ("s3", from `+"`destinationArn`"+`); AccessLogPolicy allows one policy per target, section and destination type (the first wins)`)},
		},
		"CloudWatch Logs beside S3": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("second", "arn:aws:logs:us-west-2:123456789012:log-group:access-logs"),
		},
		"Firehose beside S3": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("second", "arn:aws:firehose:us-west-2:123456789012:deliverystream/logs"),
		},
		"a destination with no service to read conflicts with none": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("second", "not-an-arn"),
		},
		"an existing destination with no service to read conflicts with none": {
			existing: accessLogPolicy("first", "not-an-arn"),
			policy:   accessLogPolicy("second", bucket),
		},
		"an update keeps its own type": {
			existing: accessLogPolicy("first", bucket),
			policy:   accessLogPolicy("first", "arn:aws:s3:::renamed-bucket"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, accessLogGateway, tc.existing)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Across namespaces a verdict reads no value of the other namespace's policy: in mode key
// any second policy there conflicts, and the message quotes no key.
func TestValidateConflictsByKeyAcrossNamespaces(t *testing.T) {
	table := kinds.BuiltinKindTable()
	require.NoError(t, table.Load([]byte(`
kinds:
- group: example.com
  kind: LogPolicy
  class: Direct
  targetRefFields: [targetRef]
  crossNamespaceTargets: true
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  conflicts:
    mode: key
    key: {field: sink.url, pattern: "^([a-z]+)://", name: sink scheme}
`), "test"))
	logPolicy := func(namespace, url string) string {
		return `
apiVersion: example.com/v1
kind: LogPolicy
metadata: {name: logs, namespace: ` + namespace + `}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}
  sink: {url: "` + url + `"}`
	}
	world := []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]`,
		grantIn("infra", `{group: example.com, kind: LogPolicy, namespace: team-a}`, `{group: gateway.networking.k8s.io, kind: Gateway}`),
		grantIn("infra", `{group: example.com, kind: LogPolicy, namespace: team-b}`, `{group: gateway.networking.k8s.io, kind: Gateway}`),
		logPolicy("team-a", "https://logs.example.com"),
		logPolicy("team-b", "syslog://logs.example.com"),
	}
	cases := map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"another scheme, same namespace as neither": {
			policy: logPolicy("team-c", "kafka://logs"),
			want: field.ErrorList{
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonConflicted,
					`Gateway infra/gw already has a LogPolicy in namespace "team-a", whose sink scheme is not compared across namespaces; LogPolicy allows one policy per target, section and sink scheme (the first wins)`),
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRef", validation.ReasonConflicted,
					`Gateway infra/gw already has a LogPolicy in namespace "team-b", whose sink scheme is not compared across namespaces; LogPolicy allows one policy per target, section and sink scheme (the first wins)`),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, world...)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Envoy AI Gateway's QuotaPolicy: two policies that set one model's quota at one backend are
// settled by namespace/name (order nameFirst), never by creation order, so neither conflicts.
func TestValidateConflictsNameFirstOrder(t *testing.T) {
	table := kinds.BuiltinKindTable()
	quota := func(name string, limit string) string {
		return `
apiVersion: aigateway.envoyproxy.io/v1alpha1
kind: QuotaPolicy
metadata: {name: ` + name + `, namespace: default}
spec:
  targetRefs: [{group: aigateway.envoyproxy.io, kind: AIServiceBackend, name: be-1}]
  perModelQuotas:
  - modelName: gpt-4
    quota: {defaultBucket: {limit: ` + limit + `, duration: 1m}}`
	}
	backend := `
apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIServiceBackend
metadata: {name: be-1, namespace: default}
spec: {schema: {name: OpenAI}, backendRef: {name: openai, kind: Backend, group: gateway.envoyproxy.io}}`
	snap := rulestest.World(t, table, backend, quota("policy-b", "50"))
	rulestest.Matcher.Test(t, nil, validation.ValidateConflicts(rulestest.PolicyOf(t, table, quota("policy-a", "10")), snap, nil))
}
