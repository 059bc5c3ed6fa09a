package impact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// ObservedOf reads status.ancestors with Gateway API's defaults for what a reference leaves
// out, GEP-5058's targets, which entries are stale, and keeps what it reads bounded.
func TestObservedOf(t *testing.T) {
	table := kinds.BuiltinKindTable()
	obj := rulestest.Decode(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: app, generation: 3}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  validation: {hostname: b1.example.com, wellKnownCACertificates: System}
status:
  ancestors:
  - ancestorRef: {name: gw}
    controllerName: example.com/gateway-controller
    conditions:
    - {type: Accepted, status: "True", reason: Accepted, observedGeneration: 3}
  - ancestorRef: {group: gateway.networking.k8s.io, kind: Gateway, name: old, namespace: infra, sectionName: https}
    controllerName: example.com/gateway-controller
    conditions:
    - {type: Accepted, status: "False", reason: Conflicted, message: "`+strings.Repeat("x", 300)+`", observedGeneration: 2}
  - ancestorRef: {name: gw}
    controllerName: example.com/other
    conditions:
    - {type: Accepted, status: "False", reason: PartiallyAccepted, observedGeneration: 3}
    targets:
    - targetRef: {group: "", kind: Service, name: b1}
      conditions: [{type: Accepted, status: "True", reason: Accepted, observedGeneration: 3}]
  - ancestorRef: {name: nothing-written}
    controllerName: example.com/gateway-controller`)
	row, _ := table.Lookup(rulestest.GroupKindOf(t, obj))
	seen := ObservedOf(policy.NewPolicy(row, obj), obj)
	require.NotNil(t, seen)
	require.Len(t, seen.Entries, 3, "an entry with no conditions holds nothing to compare")
	assert.Equal(t, ObservedEntry{Ancestor: gatewayRef("app", "gw"), Controller: "example.com/gateway-controller",
		Conditions: []kinds.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}, seen.Entries[0])
	old := seen.Entries[1]
	assert.Equal(t, ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "old", SectionName: "https"}, old.Ancestor)
	assert.True(t, old.Stale, "written for generation 2 of 3")
	assert.Len(t, old.Conditions[0].Message, maxObservedMessage)
	assert.True(t, strings.HasSuffix(old.Conditions[0].Message, "…"))
	assert.Equal(t, []ObservedTarget{{Target: ObjectRef{Kind: "Service", Namespace: "app", Name: "b1"},
		Conditions: []kinds.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}}, seen.Entries[2].Targets)

	delete(obj, "status")
	assert.Nil(t, ObservedOf(policy.NewPolicy(row, obj), obj))
}

// Kuadrant writes status.conditions for the policy as a whole and says in
// status.observedGeneration which generation they describe.
func TestObservedOfPolicyScope(t *testing.T) {
	table := kinds.BuiltinKindTable()
	obj := rulestest.Decode(t, `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: p, namespace: app, generation: 2}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  limits: {l: {rates: [{limit: 1, window: 1m}]}}
status:
  observedGeneration: 1
  conditions:
  - {type: Accepted, status: "True", reason: Accepted}
  - {type: Enforced, status: "True", reason: Enforced, message: RateLimitPolicy has been successfully enforced}
  ancestors:
  - ancestorRef: {name: ignored}
    conditions: [{type: Accepted, status: "True"}]`)
	row, _ := table.Lookup(rulestest.GroupKindOf(t, obj))
	seen := ObservedOf(policy.NewPolicy(row, obj), obj)
	require.NotNil(t, seen)
	assert.Equal(t, []ObservedEntry{{Controller: "kuadrant-operator", Stale: true, Conditions: []kinds.Condition{
		{Type: "Accepted", Status: "True", Reason: "Accepted"},
		{Type: "Enforced", Status: "True", Reason: "Enforced", Message: "RateLimitPolicy has been successfully enforced"},
	}}}, seen.Entries)

	var o Observations
	p := policy.NewPolicy(row, obj)
	o.Add(p, obj)
	assert.Equal(t, 1, o.Len())
	assert.Same(t, o.m[observedID{p.GroupKind(), "app", "p"}], o.Of(p))
	delete(obj, "status")
	o.Add(p, obj)
	assert.Zero(t, o.Len(), "a status that holds nothing now is forgotten")
	var none *Observations
	assert.Nil(t, none.Of(p))
}

// The classes of a pair of sides.
func TestDisagreement(t *testing.T) {
	all := []string{StatusEnforced, StatusPartiallyEnforced, StatusOverridden, StatusNoTargets}
	for name, tc := range map[string]struct {
		means   []string
		ours    string
		refusal bool
		want    string
	}{
		"both refuse, whatever the reasons":               {[]string{kinds.MeansRefused}, Denied, true, ""},
		"the controller refuses what the rules admit":     {[]string{kinds.MeansRefused}, StatusEnforced, true, ClassRefusedByController},
		"TargetNotFound where nothing is reached":         {[]string{StatusNoTargets}, StatusNoTargets, true, ""},
		"TargetNotFound where the rules reach a path":     {[]string{StatusNoTargets}, StatusEnforced, true, ClassRefusedByController},
		"TargetNotFound, and the rules deny it":           {[]string{StatusNoTargets}, Denied, true, ""},
		"refused where the rules reach no path":           {[]string{kinds.MeansRefused}, StatusNoTargets, true, ""},
		"refused where the rules predict it loses":        {[]string{kinds.MeansRefused}, StatusOverridden, true, ""},
		"refused where the rules predict it partly wins":  {[]string{kinds.MeansRefused}, StatusPartiallyEnforced, true, ClassRefusedByController},
		"accepted, the rules deny it":                     {all, Denied, false, ClassDeniedByWebhook},
		"applied nowhere (not refused), the rules deny":   {[]string{StatusNoTargets}, Denied, false, ""},
		"accepted, predicted anything":                    {all, StatusOverridden, false, ""},
		"Envoy Gateway applies it whole, predicted so":    {[]string{StatusEnforced}, StatusEnforced, false, ""},
		"Envoy Gateway applies it whole, predicted not":   {[]string{StatusEnforced}, StatusPartiallyEnforced, false, ClassStatusDiffers},
		"overridden there, predicted enforced":            {[]string{StatusPartiallyEnforced, StatusOverridden}, StatusEnforced, false, ClassStatusDiffers},
		"no path under the ancestor agrees with accepted": {[]string{StatusEnforced}, StatusNoTargets, false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, disagreement(tc.means, tc.ours, tc.refusal))
		})
	}
}

// Compare judges each entry over the paths under its ancestor (a listener when it names a
// section) and, for GEP-5058 entries, through each target; stale entries and conditions the
// row does not read are not compared.
func TestCompare(t *testing.T) {
	table := kinds.BuiltinKindTable()
	docs := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
  - {name: other, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: app}
spec: {parentRefs: [{name: gw, namespace: infra, sectionName: http}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: app}
spec: {parentRefs: [{name: gw, namespace: infra, sectionName: other}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: gw-wide, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: {http: {requestTimeout: 10s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: route-a, namespace: app, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a}]
  timeout: {http: {requestTimeout: 5s}}`
	snap := rulestest.World(t, table, docs)
	gwWide := storedPolicy(t, snap, "infra", "gw-wide")
	entry := func(section string, conditions ...kinds.Condition) ObservedEntry {
		a := gatewayRef("infra", "gw")
		a.SectionName = section
		return ObservedEntry{Ancestor: a, Controller: "gateway.envoyproxy.io/gatewayclass-controller", Conditions: conditions}
	}
	accepted := kinds.Condition{Type: "Accepted", Status: "True", Reason: "Accepted"}
	overridden := kinds.Condition{Type: "Overridden", Status: "True", Reason: "Overridden", Message: "This policy is being overridden by other backendTrafficPolicies for these routes: [app/a]"}
	c := NewComparer(snap)

	// On the whole Gateway it is overridden on one route of two: Overridden agrees. On the
	// listener other, where nothing overrides it, Overridden does not; accepted there does.
	n, out := c.Compare(gwWide, &ObservedStatus{Entries: []ObservedEntry{
		entry("", accepted, overridden),
		entry("other", accepted, overridden),
		entry("http", accepted),
		func() ObservedEntry { e := entry("", accepted); e.Stale = true; return e }(),
		entry("", kinds.Condition{Type: "Programmed", Status: "True"}),
	}}, nil)
	assert.Equal(t, 3, n, "the stale entry and the one without Accepted are not compared")
	require.Len(t, out, 2)
	assert.Equal(t, Disagreement{Policy: gwWide, Class: ClassStatusDiffers, Controller: "gateway.envoyproxy.io/gatewayclass-controller",
		Ancestor: ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw", SectionName: "other"},
		Theirs:   []kinds.Condition{overridden}, TheirMeaning: []string{StatusPartiallyEnforced, StatusOverridden}, Ours: StatusEnforced, Contexts: 1}, out[0])
	assert.Equal(t, "Gateway infra/gw section other: predicted Enforced on 1 path; gateway.envoyproxy.io/gatewayclass-controller says "+
		"Overridden=True (Overridden): This policy is being overridden by other backendTrafficPolicies for these routes: [app/a]", out[0].Message())
	assert.Equal(t, Disagreement{Policy: gwWide, Class: ClassStatusDiffers, Controller: "gateway.envoyproxy.io/gatewayclass-controller",
		Ancestor: ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw", SectionName: "http"},
		Theirs:   []kinds.Condition{accepted}, TheirMeaning: []string{StatusEnforced}, Ours: StatusOverridden, Contexts: 1}, out[1],
		"on listener http it is overridden, and the controller says it applies whole")

	// A denial: the controller's acceptance disagrees, its refusal agrees.
	routeA := storedPolicy(t, snap, "app", "route-a")
	n, out = c.Compare(routeA, &ObservedStatus{Entries: []ObservedEntry{entry("", accepted)}}, []string{"Conflicted"})
	assert.Equal(t, 1, n)
	require.Len(t, out, 1)
	assert.Equal(t, "Gateway infra/gw: gateway.envoyproxy.io/gatewayclass-controller accepted it (Accepted=True (Accepted)); the rules would deny it today (Conflicted)", out[0].Message())
	_, out = c.Compare(routeA, &ObservedStatus{Entries: []ObservedEntry{entry("", kinds.Condition{Type: "Accepted", Status: "False", Reason: "Conflicted"})}}, []string{"Conflicted"})
	assert.Empty(t, out)

	// GEP-5058: per target, the top-level summary set aside.
	snap2 := rulestest.World(t, table, docs, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: two, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}], color: red}`)
	two := storedPolicy(t, snap2, "app", "two")
	routeRef := func(name string) ObjectRef {
		return ObjectRef{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: name}
	}
	per := entry("", kinds.Condition{Type: "Accepted", Status: "False", Reason: "PartiallyAccepted"})
	per.Targets = []ObservedTarget{
		{Target: routeRef("a"), Conditions: []kinds.Condition{accepted}},
		{Target: routeRef("missing"), Conditions: []kinds.Condition{{Type: "Accepted", Status: "False", Reason: "TargetNotFound"}}},
		{Target: routeRef("b"), Conditions: []kinds.Condition{{Type: "Accepted", Status: "False", Reason: "Invalid"}}},
	}
	n, out = NewComparer(snap2).Compare(two, &ObservedStatus{Entries: []ObservedEntry{per}}, nil)
	assert.Equal(t, 3, n)
	require.Len(t, out, 0, "b is not a target of the policy: no path through it, and refused: applied nowhere either way")
	per.Targets[1].Conditions = []kinds.Condition{{Type: "Accepted", Status: "False", Reason: "Invalid"}}
	per.Targets[0].Conditions = []kinds.Condition{{Type: "Accepted", Status: "False", Reason: "Invalid", Message: "bad"}}
	_, out = NewComparer(snap2).Compare(two, &ObservedStatus{Entries: []ObservedEntry{per}}, nil)
	require.Len(t, out, 1)
	assert.Equal(t, ClassRefusedByController, out[0].Class)
	assert.Equal(t, "HTTPRoute app/a at Gateway infra/gw: gateway.envoyproxy.io/gatewayclass-controller refused it (Accepted=False (Invalid): bad); the rules admit it, predicting Enforced on 1 path", out[0].Message())
}
