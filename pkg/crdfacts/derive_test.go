package crdfacts

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// sampleRow is a built-in row as read at one release.
const sampleRow = `
kinds:
- group: example.io
  kind: SamplePolicy
  versions: [v1]
  readAt: example/sample v1.0.0
  class: Inherited
  targetRefFields: [targetRefs]
  maxTargetRefs: 2
  targets:
  - {group: gateway.networking.k8s.io, kind: Gateway, section: Listener}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, section: RouteRule}
  strategy: {field: mergeType, values: {StrategicMerge: patch}, default: atomic, targetKinds: [HTTPRoute]}
  references:
  - {path: auth.secretRef, kinds: [Secret]}
`

// widerCRD is the kind's CRD at a later release: it serves v1beta1 too, admits GRPCRoute
// targets (an enum), mergeType on them (a CEL rule), ConfigMap secrets, and more targets
// (maxItems 4 at v1, none at v1beta1).
const widerCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: samplepolicies.example.io
  labels: {helm.sh/chart: sample-crds-v1.1.0}
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations: &rules
            - rule: "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute', 'GRPCRoute'])"
            properties:
              targetRefs:
                maxItems: 4
                items: &ref
                  properties:
                    group: {type: string, enum: [gateway.networking.k8s.io]}
                    kind: {type: string, enum: [Gateway, HTTPRoute, GRPCRoute]}
                    name: {type: string}
              mergeType: {type: string}
              auth: &auth
                properties:
                  secretRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, enum: [Secret, ConfigMap]}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations: *rules
            properties:
              targetRefs: {items: *ref}
              mergeType: {type: string}
              auth: *auth
`

// stricterCRD admits less than the row: Gateway targets only, at most one; mergeType and
// secretRef as the row has them.
const stricterCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: samplepolicies.example.io
  annotations: {gateway.networking.k8s.io/bundle-version: v1.0.0}
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations:
            - rule: "!has(self.mergeType) || self.targetRefs.all(ref, ref.kind in ['HTTPRoute'])"
            properties:
              targetRefs:
                maxItems: 1
                items:
                  properties:
                    group: {type: string, enum: [gateway.networking.k8s.io]}
                    kind: {type: string, enum: [Gateway]}
                    name: {type: string}
              mergeType: {type: string}
              auth:
                properties:
                  secretRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, enum: [Secret]}
`

func sampleTable(t *testing.T) (*kinds.KindTable, *kinds.KindRow) {
	t.Helper()
	table := kinds.NewKindTable()
	require.NoError(t, table.Load([]byte(sampleRow), "builtin"))
	return table, rulestest.MustRow(t, table, "example.io", "SamplePolicy")
}

// derivedTable is a table whose SamplePolicy row is derived from crd.
func derivedTable(t *testing.T, crd string) (table *kinds.KindTable, derived, base *kinds.KindRow) {
	t.Helper()
	table, base = sampleTable(t)
	require.NoError(t, table.Put(Derive(base, FromObject(rulestest.Decode(t, crd)))))
	return table, rulestest.MustRow(t, table, "example.io", "SamplePolicy"), base
}

func TestDeriveWidensToTheInstalledCRD(t *testing.T) {
	_, row, base := derivedTable(t, widerCRD)

	assert.Equal(t, []string{"v1", "v1beta1"}, row.Versions)
	assert.Equal(t, 0, row.MaxTargetRefs, "v1beta1 sets no maxItems")
	assert.Equal(t, []kinds.TargetKind{
		{Group: kinds.GatewayGroup, Kind: "Gateway", Section: kinds.Listener},
		{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Section: kinds.RouteRule},
		{Group: kinds.GatewayGroup, Kind: "GRPCRoute", Section: kinds.RouteRule},
	}, row.Targets)
	assert.Equal(t, []string{"HTTPRoute", "GRPCRoute"}, row.Strategy.TargetKinds)
	assert.Equal(t, []string{"Secret", "ConfigMap"}, row.References[0].Kinds)
	assert.Equal(t, &kinds.InstalledCRD{
		Name: "samplepolicies.example.io", Release: "helm.sh/chart=sample-crds-v1.1.0", Base: base,
		Drift: []kinds.CRDDrift{
			{Fact: "versions", Item: "v1beta1", Row: "does not list it", CRD: "serves it", Widened: true},
			{Fact: "maxTargetRefs", Row: "at most 2", CRD: "no limit", Widened: true},
			{Fact: "targetKinds", Item: "GRPCRoute", Row: "does not admit it", CRD: "admits it", Widened: true},
			{Fact: "fieldTargetKinds", Item: "mergeType", Row: "only [HTTPRoute]", CRD: "only [HTTPRoute GRPCRoute]", Widened: true},
			{Fact: "referenceKinds", Item: "auth.secretRef ConfigMap", Row: "refuses it", CRD: "admits it", Widened: true},
		},
	}, row.Installed)

	// The built-in row is left as it was, and deriving again starts from it.
	assert.Equal(t, []string{"v1"}, base.Versions)
	assert.Len(t, base.Targets, 2)
	again := Derive(row, FromObject(rulestest.Decode(t, stricterCRD)))
	assert.Same(t, base, again.Installed.Base)
}

func TestDeriveKeepsTheRowWhereTheCRDIsStricter(t *testing.T) {
	_, row, base := derivedTable(t, stricterCRD)

	assert.Equal(t, &kinds.InstalledCRD{
		Name: "samplepolicies.example.io", Release: "gateway.networking.k8s.io/bundle-version=v1.0.0", Base: base,
		Drift: []kinds.CRDDrift{
			{Fact: "maxTargetRefs", Row: "at most 2", CRD: "at most 1"},
			{Fact: "targetKinds", Item: "HTTPRoute", Row: "admits it", CRD: "refuses it"},
		},
	}, row.Installed)
	derived := *row
	derived.Installed = nil
	assert.Equal(t, *base, derived, "a stricter CRD changes nothing: the API server refuses first")
}

// What the webhook says of each policy judged by the built-in row alone and by the row
// derived from the wider CRD: every denial the CRD makes obsolete becomes a CRDDrift warning.
func TestDerivedRowWarnsInsteadOfDenying(t *testing.T) {
	const world = rulestest.Topology + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: g1, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
`
	const drift = "the installed CRD samplepolicies.example.io admits %s, which the webhook's row of SamplePolicy (read at example/sample v1.0.0) does not; judged by the installed CRD"
	warning := func(path, what string) string {
		return "CRDDrift: " + path + ": " + fmt.Sprintf(drift, what)
	}
	supported := func(extra string) string {
		return `supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"` + extra
	}
	cases := map[string]struct {
		policy       string
		builtIn      field.ErrorList
		derived      field.ErrorList
		warnings     []string
		builtInWarns []string
	}{
		"a target kind the CRD adds": {
			policy: `{targetRefs: [{group: gateway.networking.k8s.io, kind: GRPCRoute, name: g1}]}`,
			builtIn: field.ErrorList{withBad(rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", "InvalidTargetRef", supported("")),
				"gateway.networking.k8s.io/GRPCRoute")},
			warnings: []string{warning("spec.targetRefs[0].kind", "target kind gateway.networking.k8s.io/GRPCRoute")},
		},
		"more targets than the row allows": {
			policy:  `{targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}, {group: gateway.networking.k8s.io, kind: GRPCRoute, name: g1}]}`,
			builtIn: field.ErrorList{withBad(rulestest.ReasonErr(field.ErrorTypeTooMany, "spec.targetRefs", "InvalidTargetRef", "must have at most 2 items"), 3)},
			warnings: []string{
				warning("spec.targetRefs", "3 target references (no limit; the row: at most 2)"),
				warning("spec.targetRefs[2].kind", "target kind gateway.networking.k8s.io/GRPCRoute"),
			},
		},
		"mergeType on a target kind the CRD's rule adds": {
			policy: `{mergeType: StrategicMerge, targetRefs: [{group: gateway.networking.k8s.io, kind: GRPCRoute, name: g1}]}`,
			builtIn: field.ErrorList{
				withBad(rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", "InvalidTargetRef", supported("")), "gateway.networking.k8s.io/GRPCRoute"),
				rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.mergeType", "MultipleMergeStrategies", "may be set only when every target is one of HTTPRoute; this policy targets a GRPCRoute"),
			},
			warnings: []string{
				warning("spec.targetRefs[0].kind", "target kind gateway.networking.k8s.io/GRPCRoute"),
				warning("spec.mergeType", "`mergeType` on a policy that targets a GRPCRoute"),
			},
		},
		"a reference kind the CRD adds": {
			policy:   `{auth: {secretRef: {kind: ConfigMap, name: creds}}, targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]}`,
			builtIn:  field.ErrorList{withBad(rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.auth.secretRef.kind", "InvalidTargetRef", `supported values: "Secret"`), "ConfigMap")},
			warnings: []string{warning("spec.auth.secretRef.kind", "reference kind ConfigMap")},
		},
		"what the CRD refuses too stays denied": {
			policy:  `{targetRefs: [{group: "", kind: Service, name: b1}]}`,
			builtIn: field.ErrorList{withBad(rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", "InvalidTargetRef", supported("")), "Service")},
			derived: field.ErrorList{withBad(rulestest.ReasonErr(field.ErrorTypeNotSupported, "spec.targetRefs[0].kind", "InvalidTargetRef",
				supported(`, "gateway.networking.k8s.io/GRPCRoute"`)), "Service")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc := "apiVersion: example.io/v1\nkind: SamplePolicy\nmetadata: {name: p, namespace: app}\nspec: " + tc.policy + "\n"

			table, _ := sampleTable(t)
			v := rulestest.Judge(t, table, rulestest.World(t, table, world), doc)
			rulestest.Matcher.Test(t, tc.builtIn, v.Denials)
			assert.Empty(t, v.Warnings, "the built-in row alone")

			table, _, _ = derivedTable(t, widerCRD)
			v = rulestest.Judge(t, table, rulestest.World(t, table, world), doc)
			rulestest.Matcher.Test(t, tc.derived, v.Denials)
			assert.Equal(t, tc.warnings, v.Warnings, "the derived row")
		})
	}
}

// A version the CRD serves and the row does not list is no denial of the engine's (the API
// server routes only served versions to it), but a policy written at it is warned about.
func TestDerivedRowWarnsAboutAWidenedVersion(t *testing.T) {
	table, _, _ := derivedTable(t, widerCRD)
	doc := "apiVersion: example.io/v1beta1\nkind: SamplePolicy\nmetadata: {name: p, namespace: app}\nspec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]}\n"
	v := rulestest.Judge(t, table, rulestest.World(t, table, rulestest.Topology), doc)
	assert.Empty(t, v.Denials)
	assert.Equal(t, []string{"CRDDrift: apiVersion: the installed CRD samplepolicies.example.io admits version v1beta1, which the webhook's row of SamplePolicy (read at example/sample v1.0.0) does not; judged by the installed CRD"}, v.Warnings)
}

func withBad(e *field.Error, bad any) *field.Error {
	e.BadValue = bad
	return e
}

// A row's fieldTargets widen as its strategy field's rule does: to the kinds the installed
// CRD's rule admits, or away where the CRD has no rule on the field; the built-in row is
// left as it was.
func TestDeriveWidensFieldTargets(t *testing.T) {
	table := kinds.NewKindTable()
	require.NoError(t, table.Load([]byte(`
kinds:
- group: example.io
  kind: SamplePolicy
  versions: [v1]
  class: Inherited
  targets:
  - {group: gateway.networking.k8s.io, kind: Gateway, section: Listener}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, section: RouteRule}
  fieldTargets:
  - {field: special, targetKinds: [Gateway]}
  - {field: gone, targetKinds: [HTTPRoute]}
  - {field: same, targetKinds: [HTTPRoute]}
`), "builtin"))
	base := rulestest.MustRow(t, table, "example.io", "SamplePolicy")
	crd := FromObject(rulestest.Decode(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: samplepolicies.example.io}
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations:
            - rule: "!has(self.special) || self.targetRefs.all(ref, ref.kind in ['Gateway', 'HTTPRoute'])"
            - rule: "!has(self.same) || self.targetRefs.all(ref, ref.kind == 'HTTPRoute')"
            properties:
              targetRefs:
                items:
                  properties:
                    kind: {type: string, enum: [Gateway, HTTPRoute]}
                    name: {type: string}
`))
	row := Derive(base, crd)
	assert.Equal(t, []kinds.FieldTarget{
		{Field: "special", TargetKinds: []string{"Gateway", "HTTPRoute"}},
		{Field: "same", TargetKinds: []string{"HTTPRoute"}},
	}, row.FieldTargets)
	assert.Equal(t, []kinds.CRDDrift{
		{Fact: "fieldTargetKinds", Item: "special", Row: "only [Gateway]", CRD: "only [Gateway HTTPRoute]", Widened: true},
		{Fact: "fieldTargetKinds", Item: "gone", Row: "only [HTTPRoute]", CRD: "no rule", Widened: true},
	}, row.Installed.Drift)
	assert.Equal(t, []kinds.FieldTarget{
		{Field: "special", TargetKinds: []string{"Gateway"}},
		{Field: "gone", TargetKinds: []string{"HTTPRoute"}},
		{Field: "same", TargetKinds: []string{"HTTPRoute"}},
	}, base.FieldTargets)
}

// A field the built-in row ties to some target kinds and the installed CRD's rule does not:
// the built-in row denies it, the derived row admits it with a CRDDrift warning.
func TestDerivedFieldTargetsWarnInsteadOfDenying(t *testing.T) {
	const row = `
kinds:
- group: example.io
  kind: SamplePolicy
  versions: [v1]
  readAt: example/sample v1.0.0
  class: Inherited
  targets:
  - {group: gateway.networking.k8s.io, kind: Gateway, section: Listener}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, section: RouteRule}
  fieldTargets: [{field: special, targetKinds: [Gateway]}]
`
	const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: samplepolicies.example.io}
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations:
            - rule: "!has(self.special) || self.targetRefs.all(ref, ref.kind in ['Gateway', 'HTTPRoute'])"
            properties:
              targetRefs:
                items:
                  properties:
                    kind: {type: string, enum: [Gateway, HTTPRoute]}
                    name: {type: string}
              special: {type: string}
`
	doc := "apiVersion: example.io/v1\nkind: SamplePolicy\nmetadata: {name: p, namespace: app}\nspec: {special: x, targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]}\n"
	table := kinds.NewKindTable()
	require.NoError(t, table.Load([]byte(row), "builtin"))
	v := rulestest.Judge(t, table, rulestest.World(t, table, rulestest.Topology), doc)
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.special", "InvalidTargetRef",
		"may be set only when every target is one of Gateway; this policy targets a HTTPRoute")}, v.Denials)

	base := rulestest.MustRow(t, table, "example.io", "SamplePolicy")
	require.NoError(t, table.Put(Derive(base, FromObject(rulestest.Decode(t, crd)))))
	v = rulestest.Judge(t, table, rulestest.World(t, table, rulestest.Topology), doc)
	assert.Empty(t, v.Denials)
	assert.Equal(t, []string{"CRDDrift: spec.special: the installed CRD samplepolicies.example.io admits `special` on a policy that targets a HTTPRoute, which the webhook's row of SamplePolicy (read at example/sample v1.0.0) does not; judged by the installed CRD"}, v.Warnings)
}
