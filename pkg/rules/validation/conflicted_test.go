package validation_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func TestValidateConflicts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	existing := func(name, spec string) string {
		return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
	}
	cases := map[string]struct {
		world  []string
		policy string
		want   field.ErrorList
	}{
		"atomic defaults with another value": {
			world:  []string{existing("old", `color: red`)},
			policy: rulestest.Color(`color: blue`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)},
		},
		"identical values are no conflict": {
			world:  []string{existing("old", `color: red`)},
			policy: rulestest.Color(`color: red`),
		},
		"defaults against overrides at one level are no conflict": {
			world:  []string{existing("old", `overrides: {color: red}`)},
			policy: rulestest.Color(`defaults: {color: blue}`),
		},
		"bare rules and defaults are one stanza class": {
			world:  []string{existing("old", `defaults: {color: red}`)},
			policy: rulestest.Color(`color: blue`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)},
		},
		"patch: different scalar paths are no conflict": {
			world:  []string{existing("old", `overrides: {strategy: patch, colors: {dark: brown}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {light: yellow}}`),
		},
		"patch: the same scalar path with another value": {
			world:  []string{existing("old", `overrides: {strategy: patch, colors: {dark: brown, light: red}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {dark: brown, light: yellow}}`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides.colors.light", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets overrides "colors.light" to "red" (this policy: "yellow"); `+rulestest.OrderDetail)},
		},
		"patch against atomic compares whole blocks": {
			world:  []string{existing("old", `overrides: {colors: {dark: brown}}`)},
			policy: rulestest.Color(`overrides: {strategy: patch, colors: {light: yellow}}`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted,
				`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic overrides to {"colors":{"dark":"brown"}} (this policy: {"colors":{"light":"yellow"}}); `+rulestest.OrderDetail)},
		},
		"another section of the same route is another level": {
			world: []string{existing("old", `color: red`)},
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: checkout}]
  color: blue`,
		},
		"an UPDATE is not compared with its own stored version": {
			world:  []string{existing("p", `color: red`)},
			policy: rulestest.Color(`color: blue`),
		},
		"Kuadrant merge: named rules with the same name and another value": {
			world: []string{`
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: old, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  defaults:
    strategy: merge
    limits:
      per-user: {rates: [{limit: 10, window: 1m}]}
      global: {rates: [{limit: 1000, window: 1m}]}`},
			policy: `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  defaults:
    strategy: merge
    limits:
      per-user: {rates: [{limit: 20, window: 1m}]}
      burst: {rates: [{limit: 5, window: 1s}]}
      global: {rates: [{limit: 1000, window: 1m}]}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.defaults.limits.per-user", validation.ReasonConflicted,
				`RateLimitPolicy app/old on HTTPRoute app/r1 also sets defaults "limits.per-user" to {"rates":[{"limit":10,"window":"1m"}]} (this policy: {"rates":[{"limit":20,"window":"1m"}]}); `+rulestest.OrderDetail)},
		},
		"references in a target field the kind does not have are not judged": {
			// ColorPolicy has targetRefs only: its targetRef is denied InvalidTargetRef, and
			// is no target to conflict at.
			world: []string{existing("old", `color: red`)},
			policy: `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  color: blue`,
		},
		"Direct kind: a second policy on one Service port": {
			world: []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: old, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`},
			policy: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs:
  - {group: "", kind: Service, name: b1}
  - {group: "", kind: Service, name: b1, sectionName: https}
  validation: {hostname: b1.app, wellKnownCACertificates: System}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[1]", validation.ReasonConflicted,
				"Service app/b1 section https already has BackendTLSPolicy app/old; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The route and Service the policies target exist: at a target that does not,
			// policies do not conflict yet (TestNoConflictAtAMissingTarget).
			snap := rulestest.World(t, table, append([]string{rulestest.Topology}, tc.world...)...)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Where Warn let conflicting policies pile up at one target, a review reports the ten
// highest, not all of them.
func TestConflictsReportedAreBounded(t *testing.T) {
	table := kinds.BuiltinKindTable()
	var docs []string
	for i := 0; i < 15; i++ {
		docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: old-%02d, namespace: app, creationTimestamp: "2024-01-01T00:00:%02dZ"}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`, i, i))
	}
	snap := rulestest.World(t, table, append([]string{rulestest.Topology}, docs...)...)
	v := rulestest.Judge(t, table, snap, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: new, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`)
	var want field.ErrorList
	for i := range validation.MaxConflictingPolicies {
		want = append(want, rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted, fmt.Sprintf(
			"Service app/b1 section https already has BackendTLSPolicy app/old-%02d; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)", i)))
	}
	rulestest.Matcher.Test(t, want, v.Denials) // the ten oldest...
	for i, e := range v.Denials {
		require.Equal(t, want[i].Detail, e.Detail, "...oldest first") // the matcher ignores order
	}
}

// Each conflict mode of the kind table, on one kind whose stored policy sets `a: 1` and
// `b: {c: x}` on Gateway infra/gw.
func TestConflictModes(t *testing.T) {
	const old = `
apiVersion: example.com/v1
kind: ModePolicy
metadata: {name: old, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  a: 1
  b: {c: x}`
	mine := func(spec string) string {
		return `
apiVersion: example.com/v1
kind: ModePolicy
metadata: {name: mine, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  ` + spec
	}
	valueDetail := func(path, theirs, ours string) string {
		return `ModePolicy infra/old on Gateway infra/gw also sets defaults "` + path + `" to ` + theirs + ` (this policy: ` + ours + `); ` + rulestest.OrderDetail
	}
	presenceDetail := func(path string) string {
		return `ModePolicy infra/old on Gateway infra/gw also sets defaults "` + path + `"; at one level the winner would depend on creation order alone, so use different settings or attach at another level`
	}
	cases := map[string]struct {
		conflicts kinds.Conflicts
		policy    string
		want      field.ErrorList
	}{
		"none: any second policy": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsNone},
			policy:    mine(`d: 1`),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Gateway infra/gw already has ModePolicy infra/old; ModePolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		},
		"value: the same value is no conflict": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsValue, Granularity: kinds.StrategyPatch},
			policy:    mine("a: 1\n  d: 1"),
		},
		"value: another value is": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsValue, Granularity: kinds.StrategyPatch},
			policy:    mine("a: 2\n  b: {c: x}"),
			want:      field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.a", validation.ReasonConflicted, valueDetail("a", "1", "2"))},
		},
		"presence: the same value is a conflict too": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsPresence, Granularity: kinds.StrategyPatch},
			policy:    mine("a: 1\n  d: 1"),
			want:      field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.a", validation.ReasonConflicted, presenceDetail("a"))},
		},
		"fields: an unlisted field is no conflict": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsFields, Fields: []string{"b"}},
			policy:    mine(`a: 2`),
		},
		"fields: a listed field is, whatever is set inside it": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsFields, Fields: []string{"b"}},
			policy:    mine(`b: {e: y}`),
			want:      field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.b", validation.ReasonConflicted, presenceDetail("b"))},
		},
		"never": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsNever},
			policy:    mine("a: 2\n  b: {c: y}"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			require.NoError(t, table.Put(kinds.KindRow{Group: "example.com", Kind: "ModePolicy", Class: kinds.Inherited,
				Targets: []kinds.TargetKind{{Group: kinds.GatewayGroup, Kind: "Gateway", Section: kinds.Listener}}, Conflicts: tc.conflicts}))
			snap := rulestest.World(t, table, rulestest.Topology, old)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// A kind known only from its CRD's label is never denied for a second policy alone, even
// labelled Direct (kgateway's and agentgateway's Direct-labelled kinds merge field by
// field): only the same scalar set to another value conflicts.
func TestDiscoveredKindsConflictByValue(t *testing.T) {
	table := kinds.BuiltinKindTable()
	row, ok := kinds.DiscoveredRow("example.com", "TrafficPolicy", kinds.Namespaced, "Direct")
	require.True(t, ok)
	require.NoError(t, table.Put(row))
	doc := func(name, spec string) string {
		return `
apiVersion: example.com/v1
kind: TrafficPolicy
metadata: {name: ` + name + `, namespace: infra, creationTimestamp: "2024-01-0` + map[string]string{"old": "1", "mine": "2"}[name] + `T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  ` + spec
	}
	snap := rulestest.World(t, table, rulestest.Topology, doc("old", "timeouts: {request: 10s}"))
	rulestest.Matcher.Test(t, nil, validation.ValidateConflicts(rulestest.PolicyOf(t, table, doc("mine", "retry: {attempts: 3}\n  timeouts: {request: 10s}")), snap, nil))
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.timeouts.request", validation.ReasonConflicted,
		`TrafficPolicy infra/old on Gateway infra/gw also sets defaults "timeouts.request" to "10s" (this policy: "20s"); `+rulestest.OrderDetail)},
		validation.ValidateConflicts(rulestest.PolicyOf(t, table, doc("mine", "timeouts: {request: 20s}")), snap, nil))
}

// Where the implementation orders policies at one point by a rank (an annotation, a spec
// field), policies of different ranks never conflict: only equal ranks leave the outcome to
// creation order.
func TestConflictsOnlyAtEqualRank(t *testing.T) {
	for name, tc := range map[string]struct {
		conflicts kinds.Conflicts
		rank      func(string) string // the metadata that sets a rank
		equal     *field.Error        // the denial at equal ranks
	}{
		"annotation": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsValue, Granularity: kinds.StrategyPatch, OrderAnnotation: "example.com/weight"},
			rank:      func(r string) string { return "annotations: {example.com/weight: \"" + r + "\"}" },
			equal: rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.retries", validation.ReasonConflicted,
				`RankedPolicy infra/old on Gateway infra/gw also sets defaults "retries" to 3 (this policy: 5); `+rulestest.OrderDetail),
		},
		"spec field": {
			conflicts: kinds.Conflicts{Mode: kinds.ConflictsNone, OrderField: "priority"},
			rank:      func(r string) string { return "" },
			equal: rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Gateway infra/gw already has RankedPolicy infra/old; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			table := kinds.BuiltinKindTable()
			require.NoError(t, table.Put(kinds.KindRow{Group: "example.com", Kind: "RankedPolicy", Class: kinds.Direct,
				Targets: []kinds.TargetKind{{Group: kinds.GatewayGroup, Kind: "Gateway"}}, Conflicts: tc.conflicts}))
			doc := func(name, rank, value string) string {
				return `
apiVersion: example.com/v1
kind: RankedPolicy
metadata: {name: ` + name + `, namespace: infra, ` + tc.rank(rank) + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  priority: ` + rank + `
  retries: ` + value
			}
			snap := rulestest.World(t, table, rulestest.Topology, doc("old", "10", "3"))
			rulestest.Matcher.Test(t, nil, validation.ValidateConflicts(rulestest.PolicyOf(t, table, doc("mine", "20", "5")), snap, nil))
			rulestest.Matcher.Test(t, field.ErrorList{tc.equal}, validation.ValidateConflicts(rulestest.PolicyOf(t, table, doc("mine", "10", "5")), snap, nil))
		})
	}
}

// Envoy Gateway applies one SecurityPolicy (BackendTrafficPolicy, EnvoyExtensionPolicy) per
// target: the translator sorts them by age and refuses every later one as Conflicted, even
// when the two set different things. So a second one is denied, as for a Direct kind.
func TestEnvoyGatewayAppliesOnePolicyPerTarget(t *testing.T) {
	table := kinds.BuiltinKindTable()
	sp := func(name, ts, spec string) string {
		return `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + ts + `"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
	}
	snap := rulestest.World(t, table, rulestest.Topology, sp("cors", "2024-01-01T00:00:00Z", "cors: {allowOrigins: [\"https://a.example\"]}"))
	got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, sp("jwt", "2024-01-02T00:00:00Z", "jwt: {providers: [{name: a, remoteJWKS: {uri: \"https://a.example/jwks\"}}]}")), snap, nil)
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
		"HTTPRoute app/r1 already has SecurityPolicy app/cors; SecurityPolicy allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")}, got)
}

// Gateway API v1.7.0's XTelemetryPolicy: "only a single TelemetryPolicy is permitted to apply
// to a specific Gateway resource at any given time"; the older takes precedence, whatever the
// two set (apisx/v1alpha1/xtelemetrypolicy_types.go).
func TestXTelemetryPolicyOnePerGateway(t *testing.T) {
	table := kinds.BuiltinKindTable()
	tp := func(name, ts, gateways, mode string) string {
		return `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XTelemetryPolicy
metadata: {name: ` + name + `, namespace: infra, creationTimestamp: "` + ts + `"}
spec:
  targetRefs: ` + gateways + `
  tracing: {mode: ` + mode + `}`
	}
	const gw = `[{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]`
	const other = `[{group: gateway.networking.k8s.io, kind: Gateway, name: other}]`
	world := []string{rulestest.Topology, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]`, tp("old", "2024-01-01T00:00:00Z", gw, "Disabled")}
	for name, tc := range map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"a second one at the Gateway, even with the same settings": {
			policy: tp("new", "2024-01-02T00:00:00Z", `
  - {group: gateway.networking.k8s.io, kind: Gateway, name: other}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}`, "Disabled"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[1]", validation.ReasonConflicted,
				"Gateway infra/gw already has XTelemetryPolicy infra/old; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		},
		"one at another Gateway": {policy: tp("new", "2024-01-02T00:00:00Z", other, "ImplementationDefault")},
	} {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, world...)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// NGINX Gateway Fabric's own conflict rules (each policy validator's Conflicts):
// ObservabilityPolicies conflict only when both set tracing; ClientSettingsPolicies when
// both set the same setting, even to the same value.
func TestNginxGatewayFabricConflicts(t *testing.T) {
	table := kinds.BuiltinKindTable()
	obs := func(name, spec string) string {
		return `
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: ` + name + `, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
	}
	csp := func(name, spec string) string {
		return `
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: ` + name + `, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  ` + spec
	}
	snap := rulestest.World(t, table, rulestest.Topology, obs("traced", "tracing: {strategy: ratio, ratio: 10}"),
		csp("body", "body: {maxSize: 10m}"))
	for name, tc := range map[string]struct {
		policy string
		want   field.ErrorList
	}{
		"an ObservabilityPolicy without tracing": {policy: obs("metrics", "metrics: {}")},
		"an ObservabilityPolicy with tracing": {
			policy: obs("mine", "tracing: {strategy: parent}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.tracing", validation.ReasonConflicted,
				`ObservabilityPolicy app/traced on HTTPRoute app/r1 also sets defaults "tracing"; at one level the winner would depend on creation order alone, so use different settings or attach at another level`)},
		},
		"a ClientSettingsPolicy setting another field": {policy: csp("keepalive", "keepAlive: {requests: 100}")},
		"a ClientSettingsPolicy setting the same field to the same value": {
			policy: csp("mine", "body: {maxSize: 10m}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.body.maxSize", validation.ReasonConflicted,
				`ClientSettingsPolicy app/body on HTTPRoute app/r1 also sets defaults "body.maxSize"; at one level the winner would depend on creation order alone, so use different settings or attach at another level`)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rulestest.Matcher.Test(t, tc.want, validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, nil))
		})
	}
}

// Across namespaces a verdict reads no value of the other policy: two policies that set
// the same setting at one level conflict whatever their values (and ranks), and the denial
// reads the same whether the values are equal or not, quoting neither. Within a namespace,
// values are compared as ever; messages.compareValuesAcrossNamespaces compares them across
// namespaces too.
func TestConflictsAcrossNamespacesDoNotReadValues(t *testing.T) {
	table := kinds.BuiltinKindTable()
	require.NoError(t, table.Put(kinds.KindRow{Group: "example.com", Kind: "RankedPolicy", Class: kinds.Inherited, CrossNamespaceTargets: true,
		Targets:   []kinds.TargetKind{{Group: kinds.GatewayGroup, Kind: "Gateway", Section: kinds.Listener}},
		Conflicts: kinds.Conflicts{Mode: kinds.ConflictsValue, Granularity: kinds.StrategyPatch, OrderField: "priority"}}))
	grants := `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ranked, namespace: infra}
spec:
  from: [{group: example.com, kind: RankedPolicy, namespace: app}, {group: example.com, kind: RankedPolicy, namespace: web}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`
	color := func(namespace, name, overrides string) string {
		return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: ` + namespace + `, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: ` + overrides
	}
	ranked := func(namespace, name, priority, retries string) string {
		return `
apiVersion: example.com/v1
kind: RankedPolicy
metadata: {name: ` + name + `, namespace: ` + namespace + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  priority: ` + priority + `
  retries: ` + retries
	}
	rps := func(v string) string { return "{strategy: patch, limits: {rps: " + v + "}}" }
	// One text for both cross-namespace cases: nothing in it depends on either value.
	across := rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides.limits.rps", validation.ReasonConflicted,
		`a ColorPolicy in namespace "web" on Gateway infra/gw also sets overrides "limits.rps"; `+validation.AcrossNamespacesDetail)
	compare := &validation.Messages{CompareValuesAcrossNamespaces: true}
	cases := map[string]struct {
		stored, policy string
		msgs           *validation.Messages
		want           field.ErrorList
	}{
		"one namespace, the same value": {
			stored: color("app", "old", rps("137")), policy: color("app", "mine", rps("137")),
		},
		"one namespace, another value": {
			stored: color("app", "old", rps("137")), policy: color("app", "mine", rps("138")),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides.limits.rps", validation.ReasonConflicted,
				`ColorPolicy app/old on Gateway infra/gw also sets overrides "limits.rps" to 137 (this policy: 138); `+rulestest.OrderDetail)},
		},
		"two namespaces, the same value": {
			stored: color("web", "old", rps("137")), policy: color("app", "mine", rps("137")),
			want: field.ErrorList{across},
		},
		"two namespaces, another value": {
			stored: color("web", "old", rps("137")), policy: color("app", "mine", rps("138")),
			want: field.ErrorList{across},
		},
		"two namespaces, other settings": {
			stored: color("web", "old", rps("137")), policy: color("app", "mine", "{strategy: patch, limits: {burst: 137}}"),
		},
		"two namespaces, atomic blocks": {
			stored: color("web", "old", "{color: red}"), policy: color("app", "mine", "{color: red}"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted,
				`a ColorPolicy in namespace "web" on Gateway infra/gw also sets atomic overrides; `+validation.AcrossNamespacesDetail)},
		},
		"two namespaces, other ranks": {
			stored: ranked("web", "old", "10", "3"), policy: ranked("app", "mine", "20", "3"),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.retries", validation.ReasonConflicted,
				`a RankedPolicy in namespace "web" on Gateway infra/gw also sets defaults "retries"; `+validation.AcrossNamespacesDetail)},
		},
		"two namespaces, values compared: the same value": {
			stored: color("web", "old", rps("137")), policy: color("app", "mine", rps("137")), msgs: compare,
		},
		"two namespaces, values compared: another value": {
			stored: color("web", "old", rps("137")), policy: color("app", "mine", rps("138")), msgs: compare,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides.limits.rps", validation.ReasonConflicted,
				`a ColorPolicy in namespace "web" on Gateway infra/gw also sets overrides "limits.rps" to a different value (this policy: 138); `+rulestest.OrderDetail)},
		},
		"two namespaces, values compared: other ranks": {
			stored: ranked("web", "old", "10", "3"), policy: ranked("app", "mine", "20", "5"), msgs: compare,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, rulestest.SharedGatewayWorld, grants, tc.stored)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, tc.policy), snap, tc.msgs)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// Two policies at a target or section that does not exist yet do not conflict: the
// implementation judges neither until it exists (Envoy Gateway writes no status, and a
// missing section leaves both not Accepted), and it may arrive later in the same apply. Each
// is warned instead; once the target exists the second is denied (TestValidateConflicts).
func TestNoConflictAtAMissingTarget(t *testing.T) {
	table := kinds.BuiltinKindTable()
	btls := func(name, target string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [` + target + `]
  validation: {hostname: b1.app, wellKnownCACertificates: System}`
	}
	cases := map[string]struct {
		target  string
		want    field.ErrorList
		warning string
	}{
		"the Service does not exist": {
			target:  `{group: "", kind: Service, name: b2}`,
			warning: "TargetNotFound: spec.targetRefs[0]: Service app/b2 not found; the policy takes effect once it exists",
		},
		"the Service has no such port": {
			target:  `{group: "", kind: Service, name: b1, sectionName: grpc}`,
			warning: `SectionNotFound: spec.targetRefs[0].sectionName: Service app/b1 has no Service port named "grpc"; the policy takes effect once it does`,
		},
		"the Service and its port exist": {
			target: `{group: "", kind: Service, name: b1, sectionName: https}`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				"Service app/b1 section https already has BackendTLSPolicy app/old; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, rulestest.Topology, btls("old", tc.target))
			v := rulestest.Judge(t, table, snap, btls("new", tc.target))
			rulestest.Matcher.Test(t, tc.want, v.Denials)
			if tc.warning != "" {
				require.Contains(t, v.Warnings, tc.warning)
			}
		})
	}
}

// kgateway merges ListenerPolicies port by port (perPort is a list keyed by port,
// pkg/kgateway/extensions2/plugins/listenerpolicy/merge.go mergePerPort) and field by field
// inside each port's listener: two policies conflict only on one field of one port.
func TestListenerPolicyPerPort(t *testing.T) {
	table := kinds.BuiltinKindTable()
	lp := func(name, perPort string) string {
		return `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: ListenerPolicy
metadata: {name: ` + name + `, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  perPort: ` + perPort
	}
	old := lp("old", `[{port: 8080, listener: {perConnectionBufferLimitBytes: 1024, httpSettings: {xffNumTrustedHops: 1}}}]`)
	cases := map[string]struct {
		perPort string
		want    field.ErrorList
	}{
		"another port":                    {perPort: `[{port: 9090, listener: {perConnectionBufferLimitBytes: 2048}}]`},
		"another field of the same port":  {perPort: `[{port: 8080, listener: {httpSettings: {useRemoteAddress: true}}}]`},
		"the same value on the same port": {perPort: `[{port: 8080, listener: {perConnectionBufferLimitBytes: 1024}}]`},
		"another value of one field of the same port": {
			perPort: `[{port: 9090, listener: {perConnectionBufferLimitBytes: 1}}, {port: 8080, listener: {httpSettings: {xffNumTrustedHops: 2}}}]`,
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.perPort[1].listener.httpSettings.xffNumTrustedHops", validation.ReasonConflicted,
				`ListenerPolicy infra/old on Gateway infra/gw also sets defaults "perPort[1].listener.httpSettings.xffNumTrustedHops" to 1 (this policy: 2); `+rulestest.OrderDetail)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, rulestest.Topology, old)
			got := validation.ValidateConflicts(rulestest.PolicyOf(t, table, lp("new", tc.perPort)), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}
