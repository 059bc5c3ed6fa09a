package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

var (
	gatewayGK = schema.GroupKind{Group: kinds.GatewayGroup, Kind: "Gateway"}
	routeGK   = schema.GroupKind{Group: kinds.GatewayGroup, Kind: "HTTPRoute"}
	serviceGK = schema.GroupKind{Kind: "Service"}
)

func TestTargetDeletionModes(t *testing.T) {
	cfg, err := rules.LoadConfig([]byte(`
targetDeletions:
  rules:
  - mode: Deny                  # the platform's Gateways
    kinds: [Gateway.gateway.networking.k8s.io, ListenerSet]
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: infra}}
  - mode: Deny                  # teams that asked to be stopped
    namespaceSelector: {matchLabels: {policyattachment.io/protect-targets: "true"}}
  - mode: DryRun
    kinds: [GRPCRoute]
  services: true
`), "cfg.yaml", kinds.BuiltinKindTable())
	require.NoError(t, err)
	in := func(ns string, labels ...string) map[string]string {
		m := map[string]string{"kubernetes.io/metadata.name": ns}
		for i := 0; i+1 < len(labels); i += 2 {
			m[labels[i]] = labels[i+1]
		}
		return m
	}
	assert.Equal(t, rules.Deny, cfg.TargetDeletionMode(gatewayGK, in("infra"), "alice"))
	assert.Equal(t, rules.Warn, cfg.TargetDeletionMode(routeGK, in("infra"), "alice"), "a route in infra: the first rule names kinds")
	assert.Equal(t, rules.Deny, cfg.TargetDeletionMode(routeGK, in("app", "policyattachment.io/protect-targets", "true"), "alice"))
	assert.Equal(t, rules.DryRun, cfg.TargetDeletionMode(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "GRPCRoute"}, in("app"), "alice"))
	assert.Equal(t, rules.Warn, cfg.TargetDeletionMode(gatewayGK, in("app"), "alice"), "the default")
	assert.Equal(t, rules.Warn, cfg.TargetDeletionMode(gatewayGK, in("infra"), "system:serviceaccount:kube-system:namespace-controller"),
		"the namespace controller empties a namespace being deleted: warned, never refused")
	assert.Equal(t, rules.DryRun, cfg.TargetDeletionMode(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "GRPCRoute"}, in("app"), "system:kube-controller-manager"),
		"only a refusal turns into a warning")
	assert.True(t, cfg.ReviewsDeletionOf(serviceGK))

	var none *rules.Config
	assert.Equal(t, rules.Warn, none.TargetDeletionMode(gatewayGK, in("infra"), "alice"), "no config: warn")
	for gk, want := range map[schema.GroupKind]bool{
		gatewayGK: true, routeGK: true,
		{Group: kinds.GatewayGroup, Kind: "ListenerSet"}: true,
		{Group: kinds.GatewayGroup, Kind: "UDPRoute"}:    true,
		serviceGK: false, // unless the config asks
		{Group: kinds.XGatewayGroup, Kind: "XListenerSet"}:            false, // not read from the cluster
		{Group: kinds.GatewayGroup, Kind: "GatewayClass"}:             false,
		{Group: kinds.GatewayGroup, Kind: "ReferenceGrant"}:           false,
		{Group: "policies.controller.io", Kind: "ColorPolicy"}:        false,
		{Group: "multicluster.x-k8s.io", Kind: "ServiceImport"}:       false,
		{Group: "inference.networking.k8s.io", Kind: "InferencePool"}: false,
	} {
		assert.Equal(t, want, none.ReviewsDeletionOf(gk), "%v", gk)
	}
}

func TestTargetDeletionConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct{ file, wantErr string }{
		"a typo in a field": {file: "targetDeletions: {defualt: Deny}",
			wantErr: `cfg.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "defualt"`},
		"an unknown mode": {file: "targetDeletions: {default: Refuse, rules: [{mode: Block}]}",
			wantErr: `cfg.yaml: targetDeletions.default: unsupported mode "Refuse"; supported: Deny, Warn, DryRun; targetDeletions.rules[0].mode: unsupported mode "Block"; supported: Deny, Warn, DryRun`},
		"a bad kind and selector": {file: "targetDeletions: {rules: [{mode: Deny, kinds: [.gateway.networking.k8s.io], namespaceSelector: {matchExpressions: [{key: a, operator: Maybe}]}}]}",
			wantErr: `cfg.yaml: targetDeletions.rules[0].kinds[0]: ".gateway.networking.k8s.io" is not Kind or Kind.group; targetDeletions.rules[0].namespaceSelector: "Maybe" is not a valid label selector operator`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := rules.LoadConfig([]byte(tc.file), "cfg.yaml", kinds.BuiltinKindTable())
			require.Error(t, err)
			assert.Equal(t, tc.wantErr, err.Error())
		})
	}
	// A file holding targetDeletions alone configures something.
	cfg, err := rules.LoadConfig([]byte("targetDeletions: {services: true}"), "cfg.yaml", kinds.BuiltinKindTable())
	require.NoError(t, err)
	assert.True(t, cfg.TargetDeletions.Services)
	assert.False(t, cfg.Relaxes(), "target deletions are not policy denials")
}
