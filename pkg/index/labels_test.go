package index

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// The label index follows every write: a label added, changed or removed, an object gone.
func TestLabelIndexFollowsWrites(t *testing.T) {
	s := New()
	routes := schema.GroupKind{Group: kinds.GatewayGroup, Kind: "HTTPRoute"}
	put := func(ns, name string, labels map[string]any) {
		meta := map[string]any{"name": name, "namespace": ns}
		if labels != nil {
			meta["labels"] = labels
		}
		s.AddObject(topology.NewObject(routes.Group, routes.Kind, map[string]any{"metadata": meta}))
	}
	names := func(seq func(func(*topology.Object) bool)) []string {
		var out []string
		for o := range seq {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		slices.Sort(out)
		return out
	}

	put("a", "r1", map[string]any{"team": "x"})
	put("b", "r2", map[string]any{"team": "x", "tier": "gold"})
	put("a", "r3", nil)
	s.AddObject(topology.NewObject(kinds.GatewayGroup, "GRPCRoute", map[string]any{"metadata": map[string]any{"name": "g", "namespace": "a", "labels": map[string]any{"team": "x"}}}))
	assert.Equal(t, []string{"a/r1", "b/r2"}, names(s.ObjectsLabelled(routes, "team", "x")))
	assert.Equal(t, []string{"b/r2"}, names(s.ObjectsLabelled(routes, "tier", "gold")))
	assert.Equal(t, []string{"a/r1", "a/r3", "b/r2"}, names(s.ObjectsOfKind(routes)))

	put("a", "r1", map[string]any{"team": "y"})
	put("a", "r3", map[string]any{"team": "x"})
	assert.Equal(t, []string{"a/r3", "b/r2"}, names(s.ObjectsLabelled(routes, "team", "x")))
	assert.Equal(t, []string{"a/r1"}, names(s.ObjectsLabelled(routes, "team", "y")))

	s.RemoveObject(topology.NewObject(routes.Group, routes.Kind, map[string]any{"metadata": map[string]any{"name": "r2", "namespace": "b"}}).Key())
	assert.Equal(t, []string{"a/r3"}, names(s.ObjectsLabelled(routes, "team", "x")))
	assert.Empty(t, names(s.ObjectsLabelled(routes, "tier", "gold")))
	assert.Equal(t, []string{"a/r1", "a/r3"}, names(s.ObjectsOfKind(routes)))
}
