package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func TestPolicyOrder(t *testing.T) {
	table := kinds.BuiltinKindTable()
	mk := func(ns, name, ts string) *Policy {
		return policyOf(t, table, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: `+name+`, namespace: `+ns+`, creationTimestamp: "`+ts+`"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`)
	}
	older := mk("b", "z", "2024-01-01T00:00:00Z")
	newer := mk("a", "a", "2024-01-02T00:00:00Z")
	assert.True(t, older.Higher(newer), "older creationTimestamp is higher")
	assert.False(t, newer.Higher(older))
	foobar, foobaz := mk("foo", "bar", "2024-01-01T00:00:00Z"), mk("foo", "baz", "2024-01-01T00:00:00Z")
	assert.True(t, foobar.Higher(foobaz), "ties go to {namespace}/{name} alphabetically: foo/bar before foo/baz")
	assert.Equal(t, TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "foo", Name: "gw"}, foobar.Key(foobar.TargetRefs[0]))
}
