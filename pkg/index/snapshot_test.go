package index

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

func TestObjectTableStoresReplacesAndRemoves(t *testing.T) {
	route := func(name string) *topology.Object {
		return &topology.Object{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: name}
	}
	table := newObjectTable()
	a, b := route("a"), route("b")
	table.put(a)
	table.put(b)

	got, ok := table.get(a.Key())
	require.True(t, ok)
	assert.Same(t, a, got)
	_, ok = table.get(route("c").Key())
	assert.False(t, ok, "a key never stored")

	newer := route("a")
	table.put(newer)
	got, _ = table.get(a.Key())
	assert.Same(t, newer, got, "a put under the same key replaces")
	assert.Len(t, table.bySlot, 2)

	table.remove(a.Key())
	_, ok = table.get(a.Key())
	assert.False(t, ok)
	assert.Len(t, table.bySlot, 1)
	table.remove(a.Key()) // removing what is gone is no error

	c := route("c")
	table.put(c)
	assert.Len(t, table.slots, 2, "the freed slot is used again")
	got, _ = table.get(c.Key())
	assert.Same(t, c, got)
	got, _ = table.get(b.Key())
	assert.Same(t, b, got, "reusing a slot leaves the others alone")
}

func TestObjectTableNeverAnswersWithAnotherKeysObject(t *testing.T) {
	// Were two keys ever to share a keyHash, the slot found holds the other key's object:
	// the lookup must report absent, not return it.
	table := newObjectTable()
	a := &topology.Object{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a"}
	table.put(a)
	other := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "other"}
	table.bySlot[hashKey(other)] = table.bySlot[hashKey(a.Key())]

	_, ok := table.get(other)
	assert.False(t, ok)
}

func TestHashKeyTellsEveryFieldApart(t *testing.T) {
	base := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"}
	seen := map[keyHash]policy.TargetKey{hashKey(base): base}
	for _, k := range []policy.TargetKey{
		{Group: "", Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"},
		{Group: kinds.GatewayGroup, Kind: "GRPCRoute", Namespace: "apps", Name: "a", Section: "rule-1"},
		{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "sa", Section: "rule-1"}, // same letters, moved across fields
		{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: ""},
		{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-2"},
	} {
		h := hashKey(k)
		_, dup := seen[h]
		assert.False(t, dup, "%v shares a hash", k)
		seen[h] = k
	}
	assert.Equal(t, hashKey(base), hashKey(policy.TargetKey{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "apps", Name: "a", Section: "rule-1"}),
		"equal keys hash alike")
}

func TestPolicyAloneAtATargetIsItsOwnList(t *testing.T) {
	table := kinds.BuiltinKindTable()
	row, ok := table.Lookup(schema.GroupKind{Group: kinds.GatewayGroup, Kind: "BackendTLSPolicy"})
	require.True(t, ok)
	newPolicy := func(name string) *policy.Policy {
		return policy.NewPolicy(row, decode(t, `
metadata: {name: `+name+`, namespace: apps}
spec:
  targetRefs: [{group: "", kind: Service, name: shop, sectionName: https}]
  validation: {hostname: shop.apps.svc, wellKnownCACertificates: System}`))
	}
	kind := row.GroupKind()
	at := policy.TargetKey{Group: kinds.CoreGroup, Kind: "Service", Namespace: "apps", Name: "shop", Section: "https"}
	snap := New()

	first := snap.PutPolicy(newPolicy("first"))
	list := snap.PoliciesAt(kind, at)
	require.Equal(t, []*policy.Policy{first}, list)
	assert.Same(t, &snap.policies.slots[0], &list[0], "alone, the list is the policy's slot: nothing allocated for it")
	assert.Equal(t, 1, cap(list), "an append to it moves out")

	second := snap.PutPolicy(newPolicy("second"))
	assert.Equal(t, []*policy.Policy{first, second}, snap.PoliciesAt(kind, at))
	assert.Equal(t, []*policy.Policy{first}, list, "the list handed out before is unchanged")

	snap.RemovePolicy(kind, "apps", "first")
	list = snap.PoliciesAt(kind, at)
	assert.Equal(t, []*policy.Policy{second}, list)
	assert.Equal(t, 1, cap(list), "alone again: the slot, not a list")
	assert.Empty(t, slices.DeleteFunc(slices.Clone(snap.policies.crowded.slots), func(l []*policy.Policy) bool { return l == nil }),
		"no list is left for the one policy")
	snap.RemovePolicy(kind, "apps", "second")
	assert.Empty(t, snap.PoliciesAt(kind, at))
	assert.Empty(t, snap.policies.byTarget)
	assert.Equal(t, []*policy.Policy{nil, nil}, snap.policies.slots, "no slot keeps a removed policy alive")
}

func TestPoliciesAtAfterEveryChange(t *testing.T) {
	// A map of lists, rebuilt from the stored policies after each change, is what the
	// index must answer like, whatever mix of lone and crowded attachment points it holds.
	row, _ := kinds.BuiltinKindTable().Lookup(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"})
	targets := []string{"a", "b", "c"}
	newPolicy := func(name string, on ...string) *policy.Policy {
		refs := ""
		for _, t := range on {
			refs += `{group: gateway.networking.k8s.io, kind: Gateway, name: ` + t + `},`
		}
		return policy.NewPolicy(row, decode(t, `
metadata: {name: `+name+`, namespace: apps}
spec: {targetRefs: [`+refs+`], color: red}`))
	}
	snap := New()
	stored := map[string]*policy.Policy{}
	check := func(step string) {
		t.Helper()
		for _, target := range targets {
			key := policy.TargetKey{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "apps", Name: target}
			var want []string
			for name, p := range stored {
				if slices.Contains(p.UniqueKeys(), key) {
					want = append(want, name)
				}
			}
			var got []string
			for _, p := range snap.PoliciesAt(row.GroupKind(), key) {
				got = append(got, p.Name)
			}
			assert.ElementsMatch(t, want, got, "%s: policies at %s", step, target)
		}
	}
	steps := []struct {
		name string
		on   []string // nil removes
	}{
		{"p1", []string{"a"}}, {"p2", []string{"a", "b"}}, {"p3", []string{"b", "c"}}, {"p1", nil},
		{"p4", []string{"a"}}, {"p2", []string{"c"}}, {"p3", nil}, {"p4", nil}, {"p5", []string{"a", "b", "c"}}, {"p2", nil},
	}
	for i, s := range steps {
		if s.on == nil {
			snap.RemovePolicy(row.GroupKind(), "apps", s.name)
			delete(stored, s.name)
		} else {
			stored[s.name] = snap.PutPolicy(newPolicy(s.name, s.on...))
		}
		check(fmt.Sprintf("step %d (%s %v)", i, s.name, s.on))
	}
}

// decode parses one YAML object.
func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}

func TestPutPolicyStoresACompactCopyAndPutPolicyAsIsThePolicy(t *testing.T) {
	row, _ := kinds.BuiltinKindTable().Lookup(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"})
	doc := `
metadata: {name: p, namespace: apps}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`
	snap := New()

	judged := policy.NewPolicy(row, decode(t, doc))
	stored := snap.PutPolicy(judged)
	assert.NotSame(t, judged, stored, "a compact copy")
	got, _ := snap.GetPolicy(row.GroupKind(), "apps", "p")
	assert.Same(t, stored, got)
	assert.Equal(t, judged.Spec(), stored.Spec())

	reserved := policy.NewPolicy(row, decode(t, doc))
	snap.PutPolicyAsIs(reserved)
	got, _ = snap.GetPolicy(row.GroupKind(), "apps", "p")
	assert.Same(t, reserved, got, "held a moment, as it is")
}
