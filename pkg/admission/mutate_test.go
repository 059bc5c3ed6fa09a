package admission

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func TestMutatorAddsOnlyImpactAnnotations(t *testing.T) {
	table := kinds.BuiltinKindTable()
	store := readyStore(table, index.New())
	store.SetClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
	for _, obj := range []string{
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "gw", "namespace": "app"},
		  "spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}`,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r1", "namespace": "app"},
		  "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "b1", "port": 80}]}]}}`,
	} {
		o := decodeJSON(t, obj)
		store.Upsert(groupKindOfJSON(o), o)
	}
	m := &Mutator{Store: store}
	req := review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "namespace": "app", "annotations": {"team": "web"}},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "color": "red"}}`)

	resp := m.Handle(context.Background(), req)
	require.True(t, resp.Allowed)
	require.Len(t, resp.Patches, 2, "one add per annotation; the existing one is untouched")
	got := map[string]any{}
	for _, p := range resp.Patches {
		assert.Equal(t, "add", p.Operation)
		got[p.Path] = p.Value
	}
	assert.Equal(t, "Atomic defaults on Gateway app/gw: enforced on 1 of 1 path", got["/metadata/annotations/policyattachment.io~1impact-summary"])
	var im impact.Impact
	require.NoError(t, json.Unmarshal([]byte(got["/metadata/annotations/policyattachment.io~1impact"].(string)), &im))
	assert.Equal(t, impact.Impact{Status: impact.StatusEnforced, Contexts: 1, Enforced: 1, Overrides: []string{}, OverriddenBy: []string{},
		ObservedAt: "2026-01-02T03:04:05Z"}, im)

	again := m.Handle(context.Background(), req)
	assert.Equal(t, resp.Patches, again.Patches, "re-invocation against the same state yields the same patch")
}

func TestMutatorLeavesOthersAlone(t *testing.T) {
	m := &Mutator{Store: readyStore(kinds.BuiltinKindTable(), index.New())}
	resp := m.Handle(context.Background(), review(t, admissionv1.Create, "", "ConfigMap", `{"metadata": {"name": "x"}}`))
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Patches)
	del := review(t, admissionv1.Delete, "policies.controller.io", "ColorPolicy", `{"metadata": {"name": "p"}}`)
	assert.Empty(t, m.Handle(context.Background(), del).Patches)
}
