package policy

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func TestPolicyTargetRefsOfEveryLength(t *testing.T) {
	// The first reference lives in the policy's own allocation; more move out. Every length
	// reads back as written, and the list is clipped, so an append can never write into the
	// room of another policy's list.
	table := kinds.BuiltinKindTable()
	refsOf := func(kind, spec string) []string {
		p := policyOf(t, table, kind+`
metadata: {name: p, namespace: apps}
spec: `+spec)
		assert.Equal(t, len(p.TargetRefs), cap(p.TargetRefs), "clipped: %s", spec)
		var out []string
		for _, r := range p.TargetRefs {
			out = append(out, r.Kind+"/"+r.Name+"@"+r.Path.String())
		}
		return out
	}
	const colorPolicy = "apiVersion: policies.controller.io/v1\nkind: ColorPolicy" // targetRefs only
	const rateLimitPolicy = "apiVersion: kuadrant.io/v1\nkind: RateLimitPolicy"    // targetRef only
	refs := func(spec string) []string { return refsOf(colorPolicy, spec) }
	assert.Empty(t, refs(`{color: red}`))
	assert.Empty(t, refs(`{targetRefs: []}`))
	assert.Equal(t, []string{"Gateway/a@spec.targetRef"}, refsOf(rateLimitPolicy, `{targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: a}}`))
	assert.Equal(t, []string{"HTTPRoute/a@spec.targetRefs[0]", "HTTPRoute/b@spec.targetRefs[1]", "Gateway/c@spec.targetRefs[2]"}, refs(`
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: a}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: b}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: c}`))

	// The first reference is in the policy's own room.
	p := policyOf(t, table, `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: apps}
spec: {targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: a}}`)
	assert.Same(t, &(*policyWithRef)(unsafe.Pointer(p)).firstRef[0], &p.TargetRefs[0])

	// A policy and its first reference are one allocation.
	row, _ := table.Lookup(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"})
	assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { newPolicy(row) }))
}
