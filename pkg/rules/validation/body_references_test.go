package validation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// payloadProcessor is a PayloadProcessor in ns1 whose ExtProcess backend is backendRef.
func payloadProcessor(backendRef string) string {
	return `
apiVersion: gateway.nginx.org/v1alpha1
kind: PayloadProcessor
metadata: {name: pp, namespace: ns1}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  processors:
  - type: ExtProcess
    extProcess: {backendRef: ` + backendRef + `}`
}

// grantIn is a ReferenceGrant in namespace with the given from and to entries.
func grantIn(namespace, from, to string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: ` + namespace + `}
spec:
  from: [` + from + `]
  to: [` + to + `]`
}

// The body references of NGINX Gateway Fabric's PayloadProcessor and WAFPolicy, as
// internal/controller/state/graph/policies.go (e55bfe33) checks them: a grant in the
// referent's namespace from gateway.nginx.org and the policy's kind in its namespace, to the
// referent's group and kind with its name or none; "core" read as the core group
// (reference_grant.go newReferenceGrantResolver).
func TestValidateReferenceGrantsNGINXBodyReferences(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const fromPP = `{group: gateway.nginx.org, kind: PayloadProcessor, namespace: ns1}`
	const fromWAF = `{group: gateway.nginx.org, kind: WAFPolicy, namespace: ns1}`
	ppDenied := field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.processors[0].extProcess.backendRef.namespace", validation.ReasonRefNotPermitted,
		`no ReferenceGrant in namespace "ns2" lets PayloadProcessor from namespace "ns1" reference Service "ext-svc"`)}
	waf := func(spec string) string {
		return `
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: waf, namespace: ns1}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  type: PLM
  ` + spec
	}

	cases := map[string]struct {
		policy string
		world  []string
		want   field.ErrorList
	}{
		"backend in the policy's namespace": {policy: payloadProcessor(`{name: ext-svc, port: 9000}`)},
		"backend naming the policy's namespace": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns1, port: 9000}`),
		},
		"backend in another namespace, no grant": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			want:   ppDenied,
		},
		"grant for every Service": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", fromPP, `{group: "", kind: Service}`)},
		},
		"grant to group core, read as the core group": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", fromPP, `{group: core, kind: Service, name: ext-svc}`)},
		},
		"backend spelling the core group core": {
			policy: payloadProcessor(`{group: core, kind: Service, name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", fromPP, `{group: "", kind: Service}`)},
		},
		"grant naming another Service": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", fromPP, `{group: "", kind: Service, name: other}`)},
			want:   ppDenied,
		},
		"grant from another kind": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", fromWAF, `{group: "", kind: Service}`)},
			want:   ppDenied,
		},
		"grant from group core is not the policy's group": {
			policy: payloadProcessor(`{name: ext-svc, namespace: ns2, port: 9000}`),
			world:  []string{grantIn("ns2", `{group: core, kind: PayloadProcessor, namespace: ns1}`, `{group: "", kind: Service}`)},
			want:   ppDenied,
		},
		"APPolicy in another namespace, no grant": {
			policy: waf(`policyRef: {apPolicyRef: {name: ap, namespace: security}}`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.policyRef.apPolicyRef.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "security" lets WAFPolicy from namespace "ns1" reference APPolicy "ap"`)},
		},
		"APPolicy with a grant": {
			policy: waf(`policyRef: {apPolicyRef: {name: ap, namespace: security}}`),
			world:  []string{grantIn("security", fromWAF, `{group: appprotect.f5.com, kind: APPolicy}`)},
		},
		"APLogConf where only APPolicies are granted": {
			policy: waf(`policyRef: {apPolicyRef: {name: ap, namespace: security}}
  securityLogs:
  - logRef: {apLogConfRef: {name: log, namespace: security}}
    destination: {type: stderr}
  - logRef: {apLogConfRef: {name: local-log}}
    destination: {type: stderr}`),
			world: []string{grantIn("security", fromWAF, `{group: appprotect.f5.com, kind: APPolicy}`)},
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.securityLogs[0].logRef.apLogConfRef.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "security" lets WAFPolicy from namespace "ns1" reference APLogConf "log"`)},
		},
		// A NameNamespace reference has no kind of its own: a kind written in it (the API
		// server prunes it) changes nothing.
		"kind written in an APPolicy reference is not read": {
			policy: waf(`policyRef: {apPolicyRef: {name: ap, namespace: security, kind: Secret, group: ""}}`),
			world:  []string{grantIn("security", fromWAF, `{group: appprotect.f5.com, kind: APPolicy, name: ap}`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, tc.world...)
			got := validation.ValidateReferenceGrants(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// kgatewayInMode is the built-in table with kgateway's reference grant mode set to mode, as
// a config file's implementations entry sets it.
func kgatewayInMode(t *testing.T, mode string) *kinds.KindTable {
	t.Helper()
	table := kinds.BuiltinKindTable()
	if mode == "" {
		return table
	}
	var entry kinds.Implementation
	for _, impl := range table.Implementations() {
		if impl.Name == "kgateway" {
			entry = impl
		}
	}
	require.NotNil(t, entry.ReferenceGrants, "the built-in kgateway entry has grant modes")
	grants := *entry.ReferenceGrants
	grants.Mode = mode
	entry.ReferenceGrants = &grants
	require.NoError(t, table.PutImplementations([]kinds.Implementation{entry}, "test"))
	return table
}

// kgateway's TrafficPolicy: a header value's Secret in another namespace needs a grant in
// modes PERMISSIVE (the default) and STRICT, an extAuth GatewayExtension only in STRICT, and
// nothing does in OFF (api/settings/settings.go ReferenceGrantMode;
// pluginutils/headers.go resolveHeader; trafficpolicy/constructor.go FetchGatewayExtension).
func TestValidateReferenceGrantsKgatewayModes(t *testing.T) {
	const headerSecret = `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: tp, namespace: app-ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  headerModifiers:
    request:
      set: [{name: x-api-key, secretRef: {name: api-keys, namespace: secrets-ns, key: user}}]
    response:
      add: [{secretRef: {name: local-keys}}]`
	const extAuth = `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: tp, namespace: app-ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  extAuth:
    extensionRef: {name: ext, namespace: ext-ns}`
	secretDenied := func(mode string) field.ErrorList {
		return field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.headerModifiers.request.set[0].secretRef.namespace", validation.ReasonRefNotPermitted,
			`no ReferenceGrant in namespace "secrets-ns" lets TrafficPolicy from namespace "app-ns" reference Secret "api-keys", which kgateway's reference grant mode `+mode+` (KGW_REFERENCE_GRANT_MODE) requires`)}
	}
	const fromTP = `{group: gateway.kgateway.dev, kind: TrafficPolicy, namespace: app-ns}`

	cases := map[string]struct {
		mode   string
		policy string
		world  []string
		want   field.ErrorList
	}{
		"header Secret, default mode, no grant": {policy: headerSecret, want: secretDenied("PERMISSIVE")},
		"header Secret, default mode, grant":    {policy: headerSecret, world: []string{grantIn("secrets-ns", fromTP, `{group: "", kind: Secret}`)}},
		"header Secret, grant to group core": {
			policy: headerSecret,
			world:  []string{grantIn("secrets-ns", fromTP, `{group: core, kind: Secret, name: api-keys}`)},
		},
		"header Secret, grant from the Gateway API group": {
			policy: headerSecret,
			world:  []string{grantIn("secrets-ns", `{group: gateway.networking.k8s.io, kind: TrafficPolicy, namespace: app-ns}`, `{group: "", kind: Secret}`)},
			want:   secretDenied("PERMISSIVE"),
		},
		"header Secret, STRICT, no grant": {mode: "STRICT", policy: headerSecret, want: secretDenied("STRICT")},
		"header Secret, OFF, no grant":    {mode: "OFF", policy: headerSecret},
		"extAuth, default mode, no grant": {policy: extAuth},
		"extAuth, STRICT, no grant": {
			mode:   "STRICT",
			policy: extAuth,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.extAuth.extensionRef.namespace", validation.ReasonRefNotPermitted,
				`no ReferenceGrant in namespace "ext-ns" lets TrafficPolicy from namespace "app-ns" reference GatewayExtension "ext", which kgateway's reference grant mode STRICT (KGW_REFERENCE_GRANT_MODE) requires`)},
		},
		"extAuth, STRICT, grant": {
			mode:   "STRICT",
			policy: extAuth,
			world:  []string{grantIn("ext-ns", fromTP, `{group: gateway.kgateway.dev, kind: GatewayExtension, name: ext}`)},
		},
		"extAuth, OFF, no grant": {mode: "OFF", policy: extAuth},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := kgatewayInMode(t, tc.mode)
			snap := rulestest.World(t, table, tc.world...)
			got := validation.ValidateReferenceGrants(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Envoy AI Gateway reads no ReferenceGrant for a BackendSecurityPolicy's Secrets: it ignores
// the namespace of the API key and AWS credentials file references (internal/controller/
// gateway.go bspToFilterAPIBackendAuth) and follows the Azure client secret's and the GCP
// credentials file's (backend_security_policy.go). Nothing is denied; an ignored namespace
// is warned about.
func TestBackendSecurityPolicySecretNamespaces(t *testing.T) {
	table := kinds.BuiltinKindTable()
	bsp := func(spec string) string {
		return `
apiVersion: aigateway.envoyproxy.io/v1beta1
kind: BackendSecurityPolicy
metadata: {name: bsp, namespace: default}
spec:
  targetRefs: [{group: aigateway.envoyproxy.io, kind: AIServiceBackend, name: be}]
  ` + spec
	}
	cases := map[string]struct {
		policy   string
		warnings []string
	}{
		"API key in another namespace": {
			policy: bsp(`type: APIKey
  apiKey: {secretRef: {name: key, namespace: secrets}}`),
			warnings: []string{`NamespaceIgnored: spec.apiKey.secretRef.namespace: BackendSecurityPolicy does not read the namespace of this reference: it uses Secret "key" in the policy's own namespace "default", not in "secrets"`},
		},
		"Anthropic API key naming the policy's namespace": {
			policy: bsp(`type: AnthropicAPIKey
  anthropicAPIKey: {secretRef: {name: key, namespace: default}}`),
		},
		"AWS credentials file in another namespace": {
			policy: bsp(`type: AWSCredentials
  awsCredentials: {region: us-east-1, credentialsFile: {secretRef: {name: creds, namespace: secrets}}}`),
			warnings: []string{`NamespaceIgnored: spec.awsCredentials.credentialsFile.secretRef.namespace: BackendSecurityPolicy does not read the namespace of this reference: it uses Secret "creds" in the policy's own namespace "default", not in "secrets"`},
		},
		"Azure client secret in another namespace": {
			policy: bsp(`type: AzureCredentials
  azureCredentials: {clientID: c, tenantID: t, clientSecretRef: {name: azure, namespace: secrets}}`),
		},
		"GCP credentials file in another namespace": {
			policy: bsp(`type: GCPCredentials
  gcpCredentials: {projectName: p, region: r, credentialsFile: {secretRef: {name: gcp, namespace: secrets}}}`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := rulestest.PolicyOf(t, table, tc.policy)
			snap := rulestest.World(t, table)
			rulestest.Matcher.Test(t, nil, validation.ValidateReferenceGrants(p, snap, nil))
			rulestest.Matcher.Test(t, nil, validation.ValidateReferences(p, snap, nil))
			assert.Equal(t, tc.warnings, validation.WarnNamespaceIgnored(p))
		})
	}
}
