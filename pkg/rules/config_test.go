package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
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
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, enforcementWorld)
	conflict := rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted, "")
	invalid := rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[1].kind", validation.ReasonInvalidTargetRef, "")

	cases := map[string]struct {
		settings    *rules.Config
		wantDenied  []string // reasons still denied
		wantWarn    []string // reasons admitted with a warning
		wantDryRun  []string // reasons admitted silently
		wantAllowed bool
	}{
		"nil settings deny everything": {
			wantDenied: []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
		},
		"default Warn admits with warnings": {
			settings:    &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}},
			wantWarn:    []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
			wantAllowed: true,
		},
		"default DryRun admits silently": {
			settings:    &rules.Config{Enforcement: rules.Enforcement{Default: rules.DryRun}},
			wantDryRun:  []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
			wantAllowed: true,
		},
		"a rule per reason: Deny malformed refs, Warn the rest": {
			settings: &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn, Rules: []rules.EnforcementRule{
				{Mode: rules.Deny, Reasons: []string{validation.ReasonInvalidTargetRef}},
			}}},
			wantDenied: []string{validation.ReasonInvalidTargetRef},
			wantWarn:   []string{validation.ReasonConflicted},
		},
		"the first matching rule decides": {
			settings: &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{
				{Mode: rules.DryRun, Reasons: []string{validation.ReasonConflicted}},
				{Mode: rules.Warn},
			}}},
			wantWarn:    []string{validation.ReasonInvalidTargetRef},
			wantDryRun:  []string{validation.ReasonConflicted},
			wantAllowed: true,
		},
		"kind without group matches": {
			settings:    &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{{Mode: rules.Warn, Kinds: []string{"ColorPolicy"}}}}},
			wantWarn:    []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
			wantAllowed: true,
		},
		"kind with its group matches": {
			settings:    &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{{Mode: rules.Warn, Kinds: []string{"ColorPolicy.policies.controller.io"}}}}},
			wantWarn:    []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
			wantAllowed: true,
		},
		"kind with another group does not match": {
			settings:   &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{{Mode: rules.Warn, Kinds: []string{"ColorPolicy.example.com"}}}}},
			wantDenied: []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
		},
		"namespace selector on the namespace's labels": {
			settings: &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{{Mode: rules.Warn,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "rollout"}}}}}},
			wantWarn:    []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
			wantAllowed: true,
		},
		"namespace selector by name label": {
			settings: &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn, Rules: []rules.EnforcementRule{{Mode: rules.Deny,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "app"}}}}}},
			wantDenied: []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
		},
		"namespace selector that does not match": {
			settings: &rules.Config{Enforcement: rules.Enforcement{Rules: []rules.EnforcementRule{{Mode: rules.Warn,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "done"}}}}}},
			wantDenied: []string{validation.ReasonInvalidTargetRef, validation.ReasonConflicted},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: rulestest.PolicyOf(t, table, conflictingAndInvalid), Config: tc.settings}, snap)
			assert.Equal(t, tc.wantAllowed, v.Allowed())
			assert.ElementsMatch(t, tc.wantDenied, reasonsOf(v.Denials))
			var warned, dry []string
			for _, r := range v.Relaxed {
				if r.Mode == rules.Warn {
					warned = append(warned, validation.ReasonOf(r.Error))
					assert.Contains(t, v.Warnings, rules.WarnModeWarning(r.Error))
				} else {
					require.Equal(t, rules.DryRun, r.Mode)
					dry = append(dry, validation.ReasonOf(r.Error))
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
				if validation.ReasonOf(e) == validation.ReasonConflicted {
					want = conflict
				}
				assert.Equal(t, want.Field, e.Field)
				assert.Equal(t, want.Type, e.Type)
			}
		})
	}
}

func TestWarnModeWarningText(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, enforcementWorld)
	v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: rulestest.PolicyOf(t, table, rulestest.Color(`color: blue`)),
		Config: &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}}}, snap)
	require.True(t, v.Allowed())
	assert.Equal(t, []string{
		`spec: Forbidden: Conflicted: ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); ` +
			rulestest.OrderDetail + " (admitted: enforcement mode is Warn)",
	}, v.Warnings)
}

func TestMessagesDescribeObjectsInOtherNamespaces(t *testing.T) {
	table := kinds.BuiltinKindTable()
	// A Gateway in infra, a grant letting ColorPolicies from app and web target it, and an
	// older web policy on it: the app author must not learn the web policy's name.
	snap := rulestest.World(t, table, rulestest.SharedGatewayWorld, `
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
		settings *rules.Config
		detail   string
	}{
		"hidden by default": {
			detail: `a ColorPolicy in namespace "web" on Gateway infra/gw also sets atomic overrides; ` + validation.AcrossNamespacesDetail},
		"revealed when configured": {settings: &rules.Config{Messages: validation.Messages{RevealOtherNamespaces: true}},
			detail: `ColorPolicy web/secret-team-policy on Gateway infra/gw also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); ` + validation.AcrossNamespacesDetail},
		"values compared, not revealed": {settings: &rules.Config{Messages: validation.Messages{CompareValuesAcrossNamespaces: true}},
			detail: `a ColorPolicy in namespace "web" on Gateway infra/gw also sets atomic overrides to a different value (this policy: {"color":"blue"}); ` + rulestest.OrderDetail},
		"values compared and revealed": {settings: &rules.Config{Messages: validation.Messages{RevealOtherNamespaces: true, CompareValuesAcrossNamespaces: true}},
			detail: `ColorPolicy web/secret-team-policy on Gateway infra/gw also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); ` + rulestest.OrderDetail},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: rulestest.PolicyOf(t, table, policy), Config: tc.settings}, snap)
			want := field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted, tc.detail)}
			rulestest.Matcher.Test(t, want, v.Denials)
		})
	}
}

func TestLoadConfig(t *testing.T) {
	cases := map[string]struct {
		file     string
		wantErr  string
		wantKind string // a kind the table must hold afterwards
		check    func(t *testing.T, s *rules.Config)
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
messages: {revealOtherNamespaces: true}
`,
			check: func(t *testing.T, s *rules.Config) {
				assert.Equal(t, rules.Warn, s.Enforcement.Default)
				assert.True(t, s.Messages.RevealOtherNamespaces)
				assert.True(t, s.Relaxes())
				assert.Equal(t, []string{"default: Warn", "Deny: reasons InvalidTargetRef; kinds AuthPolicy.kuadrant.io; namespaces team in (a,b)"}, s.Describe())
			},
		},
		"values compared across namespaces": {
			file: "messages: {compareValuesAcrossNamespaces: true}\n",
			check: func(t *testing.T, s *rules.Config) {
				assert.Equal(t, validation.Messages{CompareValuesAcrossNamespaces: true}, s.Messages)
			},
		},
		"kinds and enforcement together": {
			file:     "kinds:\n- {group: example.com, kind: TimeoutPolicy, class: Inherited, targets: [{group: gateway.networking.k8s.io, kind: Gateway}]}\nenforcement: {default: DryRun}\n",
			wantKind: "TimeoutPolicy",
		},
		"the skip label's guard alone": {
			file: "skipLabel: {users: [alice], groups: [platform], serviceAccounts: [argocd/argocd-application-controller]}\n",
			check: func(t *testing.T, s *rules.Config) {
				assert.True(t, s.SkipLabel.Allows("alice", nil))
				assert.True(t, s.SkipLabel.Allows("bob", []string{"system:authenticated", "platform"}))
				assert.True(t, s.SkipLabel.Allows("system:serviceaccount:argocd:argocd-application-controller", nil))
				assert.False(t, s.SkipLabel.Allows("system:serviceaccount:argocd:other", []string{"system:serviceaccounts"}))
				assert.False(t, s.Relaxes())
			},
		},
		"a service account that is not namespace/name": {
			file:    "skipLabel: {serviceAccounts: [argocd-application-controller]}",
			wantErr: `cfg.yaml: skipLabel.serviceAccounts[0]: "argocd-application-controller" is not namespace/name`,
		},
		"nothing": {file: "{}", wantErr: "cfg.yaml: nothing configured; expected `kinds`, `implementations`, `enforcement`, `messages`, `skipLabel` or `targetDeletions`"},
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
			table := kinds.BuiltinKindTable()
			s, err := rules.LoadConfig([]byte(tc.file), "cfg.yaml", table)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantKind != "" {
				_, ok := table.Lookup(rulestest.SchemaGK("example.com", tc.wantKind))
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
		out = append(out, validation.ReasonOf(e))
	}
	return out
}

func errorsOf(list []rules.Relaxed) field.ErrorList {
	var out field.ErrorList
	for _, r := range list {
		out = append(out, r.Error)
	}
	return out
}
