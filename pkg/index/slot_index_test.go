package index

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

func TestSlotIndexKeepsOrderThroughRemovals(t *testing.T) {
	a, b := keyHash{lo: 1}, keyHash{lo: 2}
	x := newSlotIndex()
	for _, slot := range []int32{10, 11, 12, 13} {
		x.add(a, slot)
	}
	x.add(b, 20)
	assert.Equal(t, []int32{10, 11, 12, 13}, slices.Collect(x.each(a)))

	x.remove(a, 11) // middle
	assert.Equal(t, []int32{10, 12, 13}, slices.Collect(x.each(a)))
	x.remove(a, 13) // tail: the next add must link after 12
	x.add(a, 14)
	assert.Equal(t, []int32{10, 12, 14}, slices.Collect(x.each(a)))
	x.remove(a, 10) // head
	assert.Equal(t, []int32{12, 14}, slices.Collect(x.each(a)))
	x.remove(a, 99) // not there
	x.remove(keyHash{lo: 3}, 12)
	assert.Equal(t, []int32{12, 14}, slices.Collect(x.each(a)))
	assert.Equal(t, []int32{20}, slices.Collect(x.each(b)))

	x.remove(a, 12)
	x.remove(a, 14)
	assert.Empty(t, slices.Collect(x.each(a)))
	assert.NotContains(t, x.lists, a, "an emptied list leaves the map")
	entries := len(x.entries)
	x.add(a, 30)
	x.add(a, 31)
	assert.Equal(t, entries, len(x.entries), "freed entries are reused")
	assert.Equal(t, []int32{30, 31}, slices.Collect(x.each(a)))
}

// TestSlotIndexMatchesAMapOfSlices runs random additions and removals against the
// index and against the map of slices it replaced, which must always agree.
func TestSlotIndexMatchesAMapOfSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := newSlotIndex()
	model := map[keyHash][]int32{}
	for step := range 5000 {
		h := keyHash{lo: uint64(rng.IntN(20))}
		slot := int32(rng.IntN(30))
		if rng.IntN(2) == 0 && !slices.Contains(model[h], slot) {
			x.add(h, slot)
			model[h] = append(model[h], slot)
		} else if i := slices.Index(model[h], slot); i >= 0 {
			x.remove(h, slot)
			model[h] = slices.Delete(model[h], i, i+1)
		}
		for k, want := range model {
			require.Equal(t, len(want) > 0, len(slices.Collect(x.each(k))) > 0, "step %d", step)
			if len(want) > 0 {
				require.Equal(t, want, slices.Collect(x.each(k)), "step %d", step)
			}
		}
	}
	assert.LessOrEqual(t, len(x.entries), 20*30+1, "entries are reused, not leaked")
}

func TestRouteIndexesFollowUpdatesAndRemovals(t *testing.T) {
	snap := New()
	route := func(parent, backend string) *topology.Object {
		return topology.NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: moving, namespace: apps}
spec: {parentRefs: [{name: `+parent+`}], rules: [{backendRefs: [{name: `+backend+`}]}]}
`))
	}
	key := func(kind, name string) policy.TargetKey {
		group := kinds.GatewayGroup
		if kind == "Service" {
			group = kinds.CoreGroup
		}
		return policy.TargetKey{Group: group, Kind: kind, Namespace: "apps", Name: name}
	}
	first := route("gw-a", "svc-a")
	snap.AddObject(first)
	other := topology.NewObject(kinds.GatewayGroup, "HTTPRoute", decode(t, `
metadata: {name: other, namespace: apps}
spec: {parentRefs: [{name: gw-a}], rules: [{backendRefs: [{name: svc-a}]}]}
`))
	snap.AddObject(other)
	assert.Equal(t, []*topology.Object{first, other}, slices.Collect(snap.RoutesByParent(key("Gateway", "gw-a"))))

	moved := route("gw-b", "svc-b") // a new version of the same route
	snap.AddObject(moved)
	assert.Equal(t, []*topology.Object{other}, slices.Collect(snap.RoutesByParent(key("Gateway", "gw-a"))))
	assert.Equal(t, []*topology.Object{other}, slices.Collect(snap.RoutesByBackend(key("Service", "svc-a"))))
	assert.Equal(t, []*topology.Object{moved}, slices.Collect(snap.RoutesByParent(key("Gateway", "gw-b"))))
	assert.Equal(t, []*topology.Object{moved}, slices.Collect(snap.RoutesByBackend(key("Service", "svc-b"))))

	snap.RemoveObject(moved.Key())
	assert.Empty(t, slices.Collect(snap.RoutesByParent(key("Gateway", "gw-b"))))
	assert.Empty(t, slices.Collect(snap.RoutesByBackend(key("Service", "svc-b"))))
	assert.Equal(t, []*topology.Object{other}, slices.Collect(snap.RoutesByParent(key("Gateway", "gw-a"))))
}

func TestRouteIndexesFindRoutesWhateverTheOrderOfArrival(t *testing.T) {
	routeDoc := func(name string) map[string]any {
		return decode(t, `
metadata: {name: `+name+`, namespace: apps}
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: http}]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
`)
	}
	serviceDoc := `
metadata: {name: shop, namespace: apps}
spec: {ports: [{name: http, port: 80}]}
`
	snap := New()
	before := topology.NewObject(kinds.GatewayGroup, "HTTPRoute", routeDoc("before")) // arrives first
	snap.AddObject(before)
	gateway := topology.NewObject(kinds.GatewayGroup, "Gateway", decode(t, `
metadata: {name: edge, namespace: infra}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
`))
	snap.AddObject(gateway)
	service := topology.NewObject(kinds.CoreGroup, "Service", decode(t, serviceDoc))
	snap.AddObject(service)
	after := topology.NewObject(kinds.GatewayGroup, "HTTPRoute", routeDoc("after")) // arrives last
	snap.AddObject(after)

	assert.ElementsMatch(t, []*topology.Object{before, after}, slices.Collect(snap.RoutesByParent(gateway.Key())))
	assert.ElementsMatch(t, []*topology.Object{before, after}, slices.Collect(snap.RoutesByBackend(service.Key())))

	// A new version of the Service: the routes still find it.
	newer := topology.NewObject(kinds.CoreGroup, "Service", decode(t, serviceDoc))
	snap.AddObject(newer)
	assert.ElementsMatch(t, []*topology.Object{before, after}, slices.Collect(snap.RoutesByBackend(newer.Key())))
}
