package rules_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// The GEP-713 Standard worked examples use g > r > b (Gateway > Route > Backend). Their
// Backends are Services; each example's ColorPolicy semantics is one row of the table.

// TestGEP713Example1 is "Example 1. Direct Policy": p1[color:red] -> b1, then
// p2[color:blue] -> b1. The controller would mark p2 not enforced; we deny it at apply time.
func TestGEP713Example1(t *testing.T) {
	table := kinds.NewKindTable()
	require.NoError(t, table.Load([]byte(`
kinds:
- group: policies.controller.io
  kind: ColorPolicy
  class: Direct
  targets: [{group: "", kind: Service}]
`), "example-1"))
	snap := rulestest.World(t, table, rulestest.Topology)
	p := func(name, c string) string {
		return fmt.Sprintf(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: %s, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  color: %s`, name, c)
	}
	v1 := rulestest.Judge(t, table, snap, p("p1", "red"))
	require.True(t, v1.Allowed(), "p1: %v", v1.Denials)
	snap.PutPolicy(rulestest.PolicyOf(t, table, p("p1", "red")))

	v2 := rulestest.Judge(t, table, snap, p("p2", "blue"))
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
		"Service app/b1 already has ColorPolicy app/p1; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)")}, v2.Denials)
}

// TestGEP713Examples2And3 admits every policy of Examples 2 and 3 (the Inherited
// ColorPolicy of the built-in table): none of them conflicts at one level.
func TestGEP713Examples2And3(t *testing.T) {
	table := kinds.BuiltinKindTable()
	const gepTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: app}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: app}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {parentRefs: [{name: g1}], rules: [{backendRefs: [{name: b1, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r4, namespace: app}
spec: {parentRefs: [{name: g2}], rules: [{backendRefs: [{name: b2, port: 80}]}]}`
	p := func(name, kind, target, spec string) string {
		return fmt.Sprintf(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: %s, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]
  %s`, name, kind, target, spec)
	}
	examples := map[string][]string{
		"Example 2": {
			p("p1", "Gateway", "g1", "color: red"),
			p("p2", "HTTPRoute", "r1", "color: blue"),
			p("p3", "Gateway", "g2", "overrides: {color: yellow}"),
			p("p4", "HTTPRoute", "r4", "color: green"),
		},
		"Example 3": {
			p("p1", "Gateway", "g1", "colors: {dark: brown, light: red}\n  strategy: atomic"),
			p("p2", "HTTPRoute", "r1", "colors: {light: blue}"),
			p("p3", "Gateway", "g2", "overrides: {colors: {light: yellow}, strategy: patch}"),
			p("p4", "HTTPRoute", "r4", "colors: {dark: olive, light: green}"),
		},
	}
	for name, policies := range examples {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, gepTopology)
			for _, doc := range policies {
				v := rulestest.Judge(t, table, snap, doc)
				assert.Empty(t, v.Denials, "policy %s", doc)
				assert.Empty(t, v.Warnings)
				snap.PutPolicy(rulestest.PolicyOf(t, table, doc))
			}
		})
	}
}

// TestExperimentalGEPTables walks the RetryOnPolicy tables of the Experimental GEP
// ("Interactions between defaults, overrides, and field values") for the cells this
// webhook decides: two policies at the same level and in the same stanza class, with
// different values, are the cells that read "first created wins, otherwise first
// alphabetically" and are Conflicted; every other cell is resolved by the hierarchy and
// is admitted.
func TestExperimentalGEPTables(t *testing.T) {
	table := kinds.NewKindTable()
	require.NoError(t, table.Load([]byte(`
kinds:
- group: networking.example.io
  kind: RetryOnPolicy
  class: Inherited
  targetRefFields: [targetRef]
  targets:
  - {group: "", kind: Namespace}
  - {group: gateway.networking.k8s.io, kind: Gateway}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute}
  stanzas: {defaults: [defaults], overrides: [overrides]}
`), "experimental-gep"))
	levels := map[string]string{
		"Namespace": `{group: "", kind: Namespace, name: appns}`,
		"Gateway":   `{group: gateway.networking.k8s.io, kind: Gateway, name: we-love-retries}`,
		"HTTPRoute": `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: route}`,
	}
	policy := func(name, level, stanza string, codes string) string {
		return fmt.Sprintf(`
apiVersion: networking.example.io/v1alpha1
kind: RetryOnPolicy
metadata: {name: %s, namespace: appns}
spec:
  targetRef: %s
  %s:
    retryOn: %s`, name, levels[level], stanza, codes)
	}
	// The GEP's objects: the namespace, its Gateway and its route.
	const world = `
apiVersion: v1
kind: Namespace
metadata: {name: appns}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: we-love-retries, namespace: appns}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: appns}
spec:
  parentRefs: [{name: we-love-retries}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]`
	for _, classA := range []string{"defaults", "overrides"} {
		for _, classB := range []string{"defaults", "overrides"} {
			for levelA := range levels {
				for levelB := range levels {
					name := fmt.Sprintf("%s %s A vs %s %s B", levelA, classA, levelB, classB)
					t.Run(name, func(t *testing.T) {
						snap := rulestest.World(t, table, world, policy("a", levelA, classA, `["501", "502", "503"]`))
						v := rulestest.Judge(t, table, snap, policy("b", levelB, classB, `["500"]`))
						if levelA == levelB && classA == classB {
							require.Len(t, v.Denials, 1)
							assert.Equal(t, validation.ReasonConflicted, validation.ReasonOf(v.Denials[0]))
							assert.Equal(t, "spec."+classB, v.Denials[0].Field)
						} else {
							assert.Empty(t, v.Denials)
						}
					})
				}
			}
		}
	}
}
