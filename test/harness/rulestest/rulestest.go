// Package rulestest holds what the rules' tests share: YAML decoding, a snapshot built
// from documents, whole-error matching and the Topology most tests Judge against.
package rulestest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Matcher compares whole field errors: type, path, the exact detail and the origin (the
// stable reason).
var Matcher = field.ErrorMatcher{}.ByType().ByField().ByDetailExact().ByOrigin()

// Decode parses one YAML object, its numbers as the API server reads them (an integer an
// int64 holds is an int64, any other number a float64).
func Decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, utiljson.Unmarshal(j, &m))
	return m
}

// World is a snapshot built from YAML documents: target objects, ReferenceGrants and
// already-admitted policies, in that order of appearance.
func World(t testing.TB, table *kinds.KindTable, docs ...string) *index.Snapshot {
	t.Helper()
	snap := index.New()
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			obj := Decode(t, part)
			gk := GroupKindOf(t, obj)
			if row, ok := table.Lookup(gk); ok {
				snap.PutPolicy(policy.NewPolicy(row, obj))
				continue
			}
			kept, err := snap.AddResource(gk, obj)
			require.NoError(t, err)
			require.True(t, kept, "test World holds an object of unknown kind %v", gk)
		}
	}
	return snap
}

func GroupKindOf(t testing.TB, obj map[string]any) schema.GroupKind {
	t.Helper()
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	require.NoError(t, err)
	return schema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}
}

// PolicyOf decodes a policy document with its row from table.
func PolicyOf(t testing.TB, table *kinds.KindTable, doc string) *policy.Policy {
	t.Helper()
	obj := Decode(t, doc)
	row, ok := table.Lookup(GroupKindOf(t, obj))
	require.True(t, ok, "no row for %v", GroupKindOf(t, obj))
	return policy.NewPolicy(row, obj)
}

// Judge admits doc as a CREATE (or an UPDATE when the snapshot holds it) against snap.
func Judge(t testing.TB, table *kinds.KindTable, snap *index.Snapshot, doc string) rules.Verdict {
	t.Helper()
	p := PolicyOf(t, table, doc)
	req := rules.Request{Operation: rules.Create, Policy: p}
	if old, ok := snap.GetPolicy(p.GroupKind(), p.Namespace, p.Name); ok {
		req.Operation, req.OldPolicy = rules.Update, old
	}
	return rules.Evaluate(req, snap)
}

// ReasonErr builds an expected error with the reason at the front of the detail.
func ReasonErr(typ field.ErrorType, path, reason, detail string) *field.Error {
	d := reason
	if detail != "" {
		d += ": " + detail
	}
	return &field.Error{Type: typ, Field: path, Detail: d, Origin: reason}
}

// The Topology most tests use: a Gateway with two listeners in infra (accepting
// ListenerSets from infra), a route with a named rule and a Service with a named port in app.
const Topology = `
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: https, protocol: HTTPS, port: 443}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - name: checkout
    backendRefs: [{name: b1, port: 443}]
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
spec:
  ports: [{name: https, port: 443}]
`

func MustRow(t testing.TB, table *kinds.KindTable, group, kind string) *kinds.KindRow {
	t.Helper()
	row, ok := table.Lookup(schema.GroupKind{Group: group, Kind: kind})
	require.True(t, ok, "no row for %s/%s", group, kind)
	return row
}

func SchemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }

func GroupOf(apiVersion string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.Group
}

// Color is a ColorPolicy in app on HTTPRoute r1 with the given spec lines.
func Color(spec string) string {
	return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  ` + spec
}

// OrderDetail ends every Conflicted detail of an Inherited kind.
const OrderDetail = "at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level"

// SharedGatewayWorld is a Gateway in infra that ColorPolicies from app and web may target
// (a ReferenceGrant in infra lets them).
const SharedGatewayWorld = `
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

// OneRoute is a Gateway gw in app with one HTTP listener, and a route r1 whose rule main
// sends to Service b1: one context path.
const OneRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: app}
spec: {parentRefs: [{name: gw}], rules: [{name: main, backendRefs: [{name: b1, port: 80}]}]}`
