package impact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func colorAt(name, created, spec string) string {
	return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "` + created + `"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec + "\n"
}

const auditRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {rules: [{backendRefs: [{name: b, port: 80}]}]}
`

func TestAudit(t *testing.T) {
	table := kinds.BuiltinKindTable()
	cases := map[string]struct {
		docs      []string
		settings  *rules.Config
		want      []string // namespace/name of each finding, in order
		wantModes []rules.Mode
	}{
		"nothing wrong": {
			docs: []string{auditRoute, colorAt("a", "2024-01-01T00:00:00Z", "color: red"), colorAt("b", "2024-01-02T00:00:00Z", "color: red")},
		},
		"of a conflicting pair the younger is the finding, whatever the listing order": {
			docs: []string{auditRoute, colorAt("a-young", "2024-01-02T00:00:00Z", "color: blue"), colorAt("z-old", "2024-01-01T00:00:00Z", "color: red")},
			want: []string{"app/a-young"}, wantModes: []rules.Mode{rules.Deny},
		},
		"same timestamp: the alphabetically first wins": {
			docs: []string{auditRoute, colorAt("b", "2024-01-01T00:00:00Z", "color: blue"), colorAt("a", "2024-01-01T00:00:00Z", "color: red")},
			want: []string{"app/b"}, wantModes: []rules.Mode{rules.Deny},
		},
		"a policy already found does not make the next one a finding": {
			// old and newest agree; middle disagrees with both. Only middle would have been denied.
			docs: []string{auditRoute, colorAt("old", "2024-01-01T00:00:00Z", "color: red"),
				colorAt("middle", "2024-01-02T00:00:00Z", "color: blue"), colorAt("newest", "2024-01-03T00:00:00Z", "color: red")},
			want: []string{"app/middle"}, wantModes: []rules.Mode{rules.Deny},
		},
		"findings carry the configured mode": {
			docs:     []string{auditRoute, colorAt("old", "2024-01-01T00:00:00Z", "color: red"), colorAt("young", "2024-01-02T00:00:00Z", "color: blue")},
			settings: &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}},
			want:     []string{"app/young"}, wantModes: []rules.Mode{rules.Warn},
		},
		"single-object rules are found too": {
			docs: []string{auditRoute, colorAt("two-ways", "2024-01-01T00:00:00Z", "defaults: {color: red}\n  overrides: {color: blue}")},
			want: []string{"app/two-ways"}, wantModes: []rules.Mode{rules.Deny},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, tc.docs...)
			findings, audited := Audit(snap, tc.settings)
			assert.Equal(t, len(tc.docs)-1, audited)
			var got []string
			var modes []rules.Mode
			for _, f := range findings {
				got = append(got, f.Policy.Ref())
				modes = append(modes, f.Modes...)
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantModes, modes)
		})
	}
}

func TestAuditConflictMessageNamesTheOlderPolicy(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, auditRoute, colorAt("young", "2024-01-02T00:00:00Z", "color: blue"), colorAt("old", "2024-01-01T00:00:00Z", "color: red"))
	findings, _ := Audit(snap, nil)
	require.Len(t, findings, 1)
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec", validation.ReasonConflicted,
		`ColorPolicy app/old on HTTPRoute app/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); `+rulestest.OrderDetail)}, findings[0].Denials)
}

func TestAuditNamesPoliciesInOtherNamespaces(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.SharedGatewayWorld, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: first, namespace: web, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}], overrides: {color: red}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: second, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}], overrides: {color: blue}}
`)
	findings, _ := Audit(snap, nil)
	require.Len(t, findings, 1)
	assert.Equal(t, "app/second", findings[0].Policy.Ref())
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.overrides", validation.ReasonConflicted,
		`ColorPolicy web/first on Gateway infra/gw also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); `+validation.AcrossNamespacesDetail)}, findings[0].Denials)
}
