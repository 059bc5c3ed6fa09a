package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// enforcementWorld has a route in a namespace labelled stage=rollout and a ColorPolicy
// already attached to it, so a second one conflicts.
const enforcementWorld = `
apiVersion: v1
kind: Namespace
metadata: {name: app, labels: {stage: rollout}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {rules: [{backendRefs: [{name: b, port: 80}]}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  color: red
`

// conflictingAndInvalid conflicts with "old" and names a kind ColorPolicy cannot target.
const conflictingAndInvalid = `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: new, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  - {group: "", kind: ConfigMap, name: c}
  color: blue
`

func TestEnforcementModes(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, enforcementWorld)
	conflict := reasonErr(field.ErrorTypeForbidden, "spec", ReasonConflicted, "")
	invalid := reasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[1].kind", ReasonInvalidTargetRef, "")

	cases := map[string]struct {
		settings    *Settings
		wantDenied  []string // reasons still denied
		wantWarn    []string // reasons admitted with a warning
		wantDryRun  []string // reasons admitted silently
		wantAllowed bool
	}{
		"nil settings deny everything": {
			wantDenied: []string{ReasonInvalidTargetRef, ReasonConflicted},
		},
		"default Warn admits with warnings": {
			settings:    &Settings{Enforcement: Enforcement{Default: Warn}},
			wantWarn:    []string{ReasonInvalidTargetRef, ReasonConflicted},
			wantAllowed: true,
		},
		"default DryRun admits silently": {
			settings:    &Settings{Enforcement: Enforcement{Default: DryRun}},
			wantDryRun:  []string{ReasonInvalidTargetRef, ReasonConflicted},
			wantAllowed: true,
		},
		"a rule per reason: Deny malformed refs, Warn the rest": {
			settings: &Settings{Enforcement: Enforcement{Default: Warn, Rules: []EnforcementRule{
				{Mode: Deny, Reasons: []string{ReasonInvalidTargetRef}},
			}}},
			wantDenied: []string{ReasonInvalidTargetRef},
			wantWarn:   []string{ReasonConflicted},
		},
		"the first matching rule decides": {
			settings: &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{
				{Mode: DryRun, Reasons: []string{ReasonConflicted}},
				{Mode: Warn},
			}}},
			wantWarn:    []string{ReasonInvalidTargetRef},
			wantDryRun:  []string{ReasonConflicted},
			wantAllowed: true,
		},
		"kind without group matches": {
			settings:    &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{{Mode: Warn, Kinds: []string{"ColorPolicy"}}}}},
			wantWarn:    []string{ReasonInvalidTargetRef, ReasonConflicted},
			wantAllowed: true,
		},
		"kind with its group matches": {
			settings:    &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{{Mode: Warn, Kinds: []string{"ColorPolicy.policies.controller.io"}}}}},
			wantWarn:    []string{ReasonInvalidTargetRef, ReasonConflicted},
			wantAllowed: true,
		},
		"kind with another group does not match": {
			settings:   &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{{Mode: Warn, Kinds: []string{"ColorPolicy.example.com"}}}}},
			wantDenied: []string{ReasonInvalidTargetRef, ReasonConflicted},
		},
		"namespace selector on the namespace's labels": {
			settings: &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{{Mode: Warn,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "rollout"}}}}}},
			wantWarn:    []string{ReasonInvalidTargetRef, ReasonConflicted},
			wantAllowed: true,
		},
		"namespace selector by name label": {
			settings: &Settings{Enforcement: Enforcement{Default: Warn, Rules: []EnforcementRule{{Mode: Deny,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "app"}}}}}},
			wantDenied: []string{ReasonInvalidTargetRef, ReasonConflicted},
		},
		"namespace selector that does not match": {
			settings: &Settings{Enforcement: Enforcement{Rules: []EnforcementRule{{Mode: Warn,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "done"}}}}}},
			wantDenied: []string{ReasonInvalidTargetRef, ReasonConflicted},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Evaluate(Request{Operation: Create, Policy: policyOf(t, table, conflictingAndInvalid), Settings: tc.settings}, snap)
			assert.Equal(t, tc.wantAllowed, v.Allowed())
			assert.ElementsMatch(t, tc.wantDenied, reasonsOf(v.Denials))
			var warned, dry []string
			for _, r := range v.Relaxed {
				if r.Mode == Warn {
					warned = append(warned, ReasonOf(r.Error))
					assert.Contains(t, v.Warnings, WarnModeWarning(r.Error))
				} else {
					require.Equal(t, DryRun, r.Mode)
					dry = append(dry, ReasonOf(r.Error))
				}
			}
			assert.ElementsMatch(t, tc.wantWarn, warned)
			assert.ElementsMatch(t, tc.wantDryRun, dry)
			assert.Len(t, v.Warnings, len(tc.wantWarn), "only Warn denials become warnings: %q", v.Warnings)
			// The errors keep their path and reason whatever their mode.
			all := append(append(field.ErrorList{}, v.Denials...), errorsOf(v.Relaxed)...)
			require.Len(t, all, 2)
			for _, e := range all {
				want := invalid
				if ReasonOf(e) == ReasonConflicted {
					want = conflict
				}
				assert.Equal(t, want.Field, e.Field)
				assert.Equal(t, want.Type, e.Type)
			}
		})
	}
}

func TestWarnModeWarningText(t *testing.T) {
	table := BuiltinKindTable()
	snap := world(t, table, enforcementWorld)
	v := Evaluate(Request{Operation: Create, Policy: policyOf(t, table, color(`color: blue`)),
		Settings: &Settings{Enforcement: Enforcement{Default: Warn}}}, snap)
	require.True(t, v.Allowed())
	assert.Equal(t, []string{
		`spec: Forbidden: Conflicted: ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); ` +
			orderDetail + " (admitted: enforcement mode is Warn)",
	}, v.Warnings)
}

func TestMessagesDescribeObjectsInOtherNamespaces(t *testing.T) {
	table := BuiltinKindTable()
	// A Gateway in infra, a grant letting ColorPolicies from app and web target it, and an
	// older web policy on it: the app author must not learn the web policy's name.
	snap := world(t, table, sharedGatewayWorld, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: secret-team-policy, namespace: web, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {color: red}
`)
	policy := `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: mine, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {color: blue}
`
	cases := map[string]struct {
		settings *Settings
		named    string
	}{
		"hidden by default":     {named: `a ColorPolicy in namespace "web"`},
		"named when configured": {settings: &Settings{Messages: Messages{NamesFromOtherNamespaces: true}}, named: "ColorPolicy web/secret-team-policy"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Evaluate(Request{Operation: Create, Policy: policyOf(t, table, policy), Settings: tc.settings}, snap)
			want := field.ErrorList{reasonErr(field.ErrorTypeForbidden, "spec.overrides", ReasonConflicted,
				tc.named+` on Gateway infra/gw also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); `+orderDetail)}
			matcher.Test(t, want, v.Denials)
		})
	}
}

// sharedGatewayWorld is a Gateway in infra that ColorPolicies from app and web may target
// (a ReferenceGrant in infra lets them).
const sharedGatewayWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec: {gatewayClassName: c, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: colors, namespace: infra}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: app}, {group: policies.controller.io, kind: ColorPolicy, namespace: web}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]
`

func TestSettingsName(t *testing.T) {
	var none *Settings
	assert.Equal(t, "ColorPolicy app/a", none.Name("ColorPolicy", "app", "a", "app"))
	assert.Equal(t, `a ColorPolicy in namespace "web"`, none.Name("ColorPolicy", "web", "a", "app"))
	assert.Equal(t, "ColorPolicy web/a", (&Settings{Messages: Messages{NamesFromOtherNamespaces: true}}).Name("ColorPolicy", "web", "a", "app"))
	assert.Equal(t, "GatewayClass c", none.Name("GatewayClass", "", "c", ""))
}

func TestLoadConfig(t *testing.T) {
	cases := map[string]struct {
		file     string
		wantErr  string
		wantKind string // a kind the table must hold afterwards
		check    func(t *testing.T, s *Settings)
	}{
		"enforcement only": {
			file: `
enforcement:
  default: Warn
  rules:
  - mode: Deny
    reasons: [InvalidTargetRef]
    kinds: [AuthPolicy.kuadrant.io]
    namespaceSelector: {matchExpressions: [{key: team, operator: In, values: [a, b]}]}
messages: {namesFromOtherNamespaces: true}
`,
			check: func(t *testing.T, s *Settings) {
				assert.Equal(t, Warn, s.Enforcement.Default)
				assert.True(t, s.Messages.NamesFromOtherNamespaces)
				assert.True(t, s.Relaxes())
				assert.Equal(t, []string{"default: Warn", "Deny: reasons InvalidTargetRef; kinds AuthPolicy.kuadrant.io; namespaces team in (a,b)"}, s.Describe())
			},
		},
		"kinds and enforcement together": {
			file:     "kinds:\n- {group: example.com, kind: TimeoutPolicy, class: Inherited, targets: [{group: gateway.networking.k8s.io, kind: Gateway}]}\nenforcement: {default: DryRun}\n",
			wantKind: "TimeoutPolicy",
		},
		"nothing": {file: "{}", wantErr: "cfg.yaml: nothing configured; expected `kinds`, `enforcement` or `messages`"},
		"a typo is an error, not a silent Deny": {
			file:    "enforcement: {defualt: Warn}",
			wantErr: `cfg.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "defualt"`,
		},
		"unknown mode": {
			file:    "enforcement: {default: Audit}",
			wantErr: `cfg.yaml: enforcement.default: unsupported mode "Audit"; supported: Deny, Warn, DryRun`,
		},
		"unknown reason and bad kind": {
			file:    "enforcement: {rules: [{mode: Warn, reasons: [Conflict], kinds: [.example.com]}]}",
			wantErr: `cfg.yaml: enforcement.rules[0].reasons[0]: unknown reason "Conflict"; known: InvalidTargetRef, RefNotPermitted, MultipleMergeStrategies, Conflicted; enforcement.rules[0].kinds[0]: ".example.com" is not Kind or Kind.group`,
		},
		"missing mode and bad selector": {
			file:    "enforcement: {rules: [{namespaceSelector: {matchExpressions: [{key: team, operator: Near}]}}]}",
			wantErr: `cfg.yaml: enforcement.rules[0].mode: unsupported mode ""; supported: Deny, Warn, DryRun; enforcement.rules[0].namespaceSelector: "Near" is not a valid label selector operator`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := BuiltinKindTable()
			s, err := LoadConfig([]byte(tc.file), "cfg.yaml", table)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantKind != "" {
				_, ok := table.Lookup(schemaGK("example.com", tc.wantKind))
				assert.True(t, ok)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func reasonsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, ReasonOf(e))
	}
	return out
}

func errorsOf(list []Relaxed) field.ErrorList {
	var out field.ErrorList
	for _, r := range list {
		out = append(out, r.Error)
	}
	return out
}
