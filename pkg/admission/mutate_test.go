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
	assert.Equal(t, "Atomic defaults on Gateway app/gw: enforced on 1 of 1 path (predicted at admission)", got["/metadata/annotations/policyattachment.io~1impact-summary"])
	var im impact.Impact
	require.NoError(t, json.Unmarshal([]byte(got["/metadata/annotations/policyattachment.io~1impact"].(string)), &im))
	// No observedAt: the prediction rests on no stored policy (and the clock is not read).
	// The ancestors in GEP-5058's shape: the Gateway, and the policy's target under it.
	gw := impact.ObjectRef{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "app", Name: "gw"}
	assert.Equal(t, impact.Impact{Status: impact.StatusEnforced, Contexts: 1, Enforced: 1, Overrides: []string{}, OverriddenBy: []string{},
		Ancestors: []impact.AncestorStatus{{AncestorRef: gw, Accepted: impact.ReasonAccepted, Status: impact.StatusEnforced, Contexts: 1,
			Targets: []impact.TargetStatus{{TargetRef: gw, Accepted: impact.ReasonAccepted, Status: impact.StatusEnforced, Contexts: 1}}}},
	}, im)

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

// TestMutationIsStable: the patch is a function of the object and the state that matters to
// it. Two replicas whose stores differ in unrelated objects, and in when each last changed,
// write the same annotations, so a GitOps tool's dry-run apply of an unchanged policy finds
// no drift.
func TestMutationIsStable(t *testing.T) {
	table := kinds.BuiltinKindTable()
	related := []string{
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "gw", "namespace": "app"},
		  "spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}`,
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r1", "namespace": "app"},
		  "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "b1", "port": 80}]}]}}`,
		`{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		  "metadata": {"name": "gw-override", "namespace": "app", "creationTimestamp": "2026-01-01T00:00:00Z"},
		  "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "overrides": {"color": "red"}}}`,
	}
	unrelated := []string{
		`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "other", "namespace": "web"},
		  "spec": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}`,
		`{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		  "metadata": {"name": "elsewhere", "namespace": "web", "creationTimestamp": "2026-03-01T00:00:00Z"},
		  "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "other"}], "color": "blue"}}`,
	}
	replica := func(at time.Time, objects ...string) *Mutator {
		store := readyStore(table, index.New())
		store.SetClock(func() time.Time { return at })
		for _, obj := range objects {
			o := decodeJSON(t, obj)
			store.Upsert(groupKindOfJSON(o), o)
		}
		return &Mutator{Store: store}
	}
	a := replica(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), related...)
	b := replica(time.Date(2026, 5, 2, 7, 0, 0, 0, time.UTC), append(append([]string{}, unrelated...), related...)...)
	req := review(t, admissionv1.Update, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "namespace": "app", "creationTimestamp": "2026-02-01T00:00:00Z"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r1"}], "defaults": {"color": "green"}}}`)

	fromA, fromB := a.Handle(context.Background(), req), b.Handle(context.Background(), req)
	require.True(t, fromA.Allowed)
	require.Len(t, fromA.Patches, 1)
	assert.Equal(t, fromA.Patches, fromB.Patches)
	assert.Equal(t, map[string]any{
		impact.AnnotationImpact: `{"status":"Overridden","contexts":1,"enforced":0,"partiallyEnforced":0,"overridden":1,"overrides":[],"overriddenBy":["app/gw-override"],"observedAt":"2026-01-01T00:00:00Z",` +
			`"ancestors":[{"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","namespace":"app","name":"gw"},"accepted":"Accepted","status":"Overridden","contexts":1,` +
			`"targets":[{"targetRef":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","namespace":"app","name":"r1"},"accepted":"Accepted","status":"Overridden","contexts":1}]}]}`,
		impact.AnnotationImpactSummary: "Atomic defaults on HTTPRoute app/r1: enforced on 0 of 1 path, overridden on 1 by app/gw-override (predicted at admission)",
	}, fromA.Patches[0].Value)
	assert.Equal(t, fromA.Patches, a.Handle(context.Background(), req).Patches, "the same replica, asked again")
	// At CREATE the API server has not set creationTimestamp yet; the annotation written
	// then is the one a later dry-run UPDATE of the unchanged object computes.
	create := review(t, admissionv1.Create, "policies.controller.io", "ColorPolicy", `{
		"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "p", "namespace": "app"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r1"}], "defaults": {"color": "green"}}}`)
	assert.Equal(t, fromA.Patches, a.Handle(context.Background(), create).Patches, "CREATE and a later UPDATE")
}
