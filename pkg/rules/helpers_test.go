package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// matcher compares whole field errors: type, path and the exact detail (reason included).
var matcher = field.ErrorMatcher{}.ByType().ByField().ByDetailExact()

// decode parses one YAML object.
func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}

// world is a snapshot built from YAML documents: target objects, ReferenceGrants and
// already-admitted policies, in that order of appearance.
func world(t testing.TB, table *KindTable, docs ...string) *MemorySnapshot {
	t.Helper()
	snap := NewMemorySnapshot()
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			obj := decode(t, part)
			gk := groupKindOf(t, obj)
			if row, ok := table.Lookup(gk); ok {
				snap.PutPolicy(NewPolicy(row, obj))
				continue
			}
			kept, err := snap.AddResource(gk, obj)
			require.NoError(t, err)
			require.True(t, kept, "test world holds an object of unknown kind %v", gk)
		}
	}
	return snap
}

func groupKindOf(t testing.TB, obj map[string]any) schema.GroupKind {
	t.Helper()
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	require.NoError(t, err)
	return schema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}
}

// policyOf decodes a policy document with its row from table.
func policyOf(t testing.TB, table *KindTable, doc string) *Policy {
	t.Helper()
	obj := decode(t, doc)
	row, ok := table.Lookup(groupKindOf(t, obj))
	require.True(t, ok, "no row for %v", groupKindOf(t, obj))
	return NewPolicy(row, obj)
}

// judge admits doc as a CREATE (or an UPDATE when the snapshot holds it) against snap.
func judge(t testing.TB, table *KindTable, snap *MemorySnapshot, doc string) Verdict {
	t.Helper()
	p := policyOf(t, table, doc)
	req := Request{Operation: Create, Policy: p}
	if old, ok := snap.GetPolicy(p.GroupKind(), p.Namespace, p.Name); ok {
		req.Operation, req.OldPolicy = Update, old
	}
	return Evaluate(req, snap)
}

// reasonErr builds an expected error with the reason at the front of the detail.
func reasonErr(typ field.ErrorType, path, reason, detail string) *field.Error {
	d := reason
	if detail != "" {
		d += ": " + detail
	}
	return &field.Error{Type: typ, Field: path, Detail: d}
}

// The topology most tests use: a Gateway with two listeners in infra, a route with a
// named rule and a Service with a named port in app.
const topology = `
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

func mustRow(t testing.TB, table *KindTable, group, kind string) *KindRow {
	t.Helper()
	row, ok := table.Lookup(schema.GroupKind{Group: group, Kind: kind})
	require.True(t, ok, "no row for %s/%s", group, kind)
	return row
}

func schemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }

func groupOf(apiVersion string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.Group
}
