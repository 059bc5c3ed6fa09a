package impact

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

func gatewayRef(namespace, name string) ObjectRef {
	return ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: namespace, Name: name}
}

// storedPolicy returns the policy namespace/name as the snapshot holds it.
func storedPolicy(t *testing.T, snap *index.Snapshot, namespace, name string) *policy.Policy {
	t.Helper()
	for _, p := range snap.Policies() {
		if p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	require.Failf(t, "no such policy", "%s/%s", namespace, name)
	return nil
}

// GEP-5058's own example: a BackendTLSPolicy on a Service that exists and one that does not,
// both under the Gateway whose route sends to them: PartiallyAccepted there, each target
// with its own status.
func TestPredictAncestorsGEP5058Example(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: prod-gateway, namespace: prod}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: prod}
spec: {parentRefs: [{name: prod-gateway}], rules: [{backendRefs: [{name: backend-ok, port: 443}, {name: backend-fail, port: 443}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: backend-ok, namespace: prod}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: multi-target-policy, namespace: prod}
spec:
  targetRefs:
  - {group: "", kind: Service, name: backend-ok, sectionName: https}
  - {group: "", kind: Service, name: backend-fail}
  validation: {hostname: backend.example.com, wellKnownCACertificates: System}`)
	im := Predict(snap, storedPolicy(t, snap, "prod", "multi-target-policy"), nil)
	assert.Equal(t, StatusEnforced, im.Status)
	assert.Equal(t, []AncestorStatus{{
		AncestorRef: gatewayRef("prod", "prod-gateway"), Accepted: ReasonPartiallyAccepted, Status: StatusEnforced, Contexts: 1, named: true,
		Targets: []TargetStatus{
			{TargetRef: ObjectRef{Kind: "Service", Namespace: "prod", Name: "backend-ok", SectionName: "https"}, Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1},
			{TargetRef: ObjectRef{Kind: "Service", Namespace: "prod", Name: "backend-fail"}, Accepted: ReasonTargetNotFound, Status: StatusNoTargets},
		},
	}}, im.Ancestors)
	assert.Empty(t, Of(snap, storedPolicy(t, snap, "prod", "multi-target-policy"), nil).Ancestors, "Of leaves the ancestors to Predict")
}

// A route attached to two Gateways is under both; a Gateway policy that reaches no route yet
// is under its Gateway, accepted, NoTargets.
func TestPredictAncestorsPerGateway(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: a, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: b, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: empty, namespace: infra}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec: {parentRefs: [{name: a, namespace: infra}, {name: b, namespace: infra}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: on-b, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: b}], overrides: {color: red}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], color: blue}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: idle, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: empty}], color: green}`)
	route := ObjectRef{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: "r"}
	im := Predict(snap, storedPolicy(t, snap, "app", "route"), nil)
	assert.Equal(t, StatusPartiallyEnforced, im.Status)
	assert.Equal(t, []AncestorStatus{
		{AncestorRef: gatewayRef("infra", "a"), Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1, named: true,
			Targets: []TargetStatus{{TargetRef: route, Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1}}},
		{AncestorRef: gatewayRef("infra", "b"), Accepted: ReasonAccepted, Status: StatusOverridden, Contexts: 1, named: true,
			Targets: []TargetStatus{{TargetRef: route, Accepted: ReasonAccepted, Status: StatusOverridden, Contexts: 1}}},
	}, im.Ancestors)

	idle := Predict(snap, storedPolicy(t, snap, "infra", "idle"), nil)
	assert.Equal(t, StatusNoTargets, idle.Status)
	assert.Equal(t, []AncestorStatus{{AncestorRef: gatewayRef("infra", "empty"), Accepted: ReasonAccepted, Status: StatusNoTargets, named: true,
		Targets: []TargetStatus{{TargetRef: gatewayRef("infra", "empty"), Accepted: ReasonAccepted, Status: StatusNoTargets}}}}, idle.Ancestors)
}

// A target is TargetNotFound under its ancestor only where Evaluate warns it is not found:
// an InferencePool is not read from the cluster (kinds.TargetInfo.Watched), so one with no
// path yet is accepted and reaches nothing, not said to be missing.
func TestPredictAncestorsNotFoundAsWarned(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: pool-a}]}]}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: pools, namespace: app}
spec:
  targetRefs:
  - {group: inference.networking.k8s.io, kind: InferencePool, name: pool-a}
  - {group: inference.networking.k8s.io, kind: InferencePool, name: pool-b}
  backend: {http: {requestTimeout: 5s}}`)
	p := storedPolicy(t, snap, "app", "pools")
	assert.Empty(t, validation.WarnMissingTargets(p, snap))
	pool := func(name string) ObjectRef {
		return ObjectRef{Group: "inference.networking.k8s.io", Kind: "InferencePool", Namespace: "app", Name: name}
	}
	assert.Equal(t, []AncestorStatus{{
		AncestorRef: gatewayRef("app", "gw"), Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1, named: true,
		Targets: []TargetStatus{
			{TargetRef: pool("pool-a"), Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1},
			{TargetRef: pool("pool-b"), Accepted: ReasonAccepted, Status: StatusNoTargets},
		},
	}}, Predict(snap, p, nil).Ancestors)
}

// The annotation names a Gateway in another namespace only where the policy's own namespace
// names it (it targets it, or a route there attaches to it) or the config reveals other
// namespaces: a Service's policy whose only route is another tenant's does not learn that
// tenant's Gateway from its annotation. explain, for operators, names it.
func TestAnnotatedAncestorsFollowTheTenantRules(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: private-gw, namespace: other}
spec: {listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: theirs, namespace: other}
spec: {parentRefs: [{name: private-gw}], rules: [{backendRefs: [{name: b1, namespace: app, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-other, namespace: app}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: other}]
  to: [{group: "", kind: Service}]
---
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: app}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: b1-tls, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  validation: {hostname: b1.example.com, wellKnownCACertificates: System}`)
	p := storedPolicy(t, snap, "app", "b1-tls")
	im := Predict(snap, p, nil)
	require.Len(t, im.Ancestors, 1)
	assert.Equal(t, gatewayRef("other", "private-gw"), im.Ancestors[0].AncestorRef, "explain names it")
	hidden := im.ForAnnotation(p, nil)
	assert.Equal(t, ObjectRef{Group: kinds.GatewayGroup, Kind: "Gateway", Namespace: "other"}, hidden.Ancestors[0].AncestorRef)
	assert.Equal(t, `a Gateway in namespace "other"`, hidden.Ancestors[0].AncestorRef.String())
	assert.Equal(t, "private-gw", im.Ancestors[0].AncestorRef.Name, "the original is unchanged")
	revealed := im.ForAnnotation(p, &validation.Messages{RevealOtherNamespaces: true})
	assert.Equal(t, gatewayRef("other", "private-gw"), revealed.Ancestors[0].AncestorRef)
}

// The annotation lists at most 16 ancestors (Gateway API's maxItems of status.ancestors) and
// 16 targets under each (GEP-5058's), saying how many there were.
func TestAnnotatedAncestorsAreBounded(t *testing.T) {
	targets := make([]TargetStatus, 40)
	refs := make([]policy.TargetRef, 40)
	for i := range targets {
		targets[i] = TargetStatus{TargetRef: ObjectRef{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Namespace: "app", Name: fmt.Sprintf("r%d", i)}, Accepted: ReasonAccepted, Status: StatusEnforced, Contexts: 1}
		refs[i] = policy.TargetRef{Group: kinds.GatewayGroup, Kind: "HTTPRoute", Name: fmt.Sprintf("r%d", i)}
	}
	ancestors := make([]AncestorStatus, 20)
	for i := range ancestors {
		ancestors[i] = AncestorStatus{AncestorRef: gatewayRef("app", fmt.Sprintf("gw%d", i)), Accepted: ReasonAccepted, Status: StatusEnforced, Targets: targets, named: true}
	}
	p := &policy.Policy{Row: &kinds.KindRow{Kind: "ColorPolicy"}, Namespace: "app", TargetRefs: refs}
	got := Impact{Ancestors: ancestors}.ForAnnotation(p, nil)
	assert.Len(t, got.Ancestors, MaxAnnotatedAncestors)
	assert.Equal(t, 20, got.AncestorsTotal)
	for _, a := range got.Ancestors {
		assert.Len(t, a.Targets, MaxAnnotatedTargets)
		assert.Equal(t, 40, a.TargetsTotal)
		assert.Equal(t, targets[:MaxAnnotatedTargets], a.Targets, "its own targets, named")
	}
	assert.Len(t, ancestors[0].Targets, 40, "the original is unchanged")
	assert.Zero(t, ancestors[0].TargetsTotal)
}

// Predict's view is what the annotation carries, and a policy refused whole by a rule of its
// row says so per target.
func TestPredictRefusedWhole(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: b, protocol: HTTP, port: 80, hostname: b.example.com}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: only-a, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: a}]
  timeout: {http: {idleTimeout: 5s}}`)
	im := Predict(snap, storedPolicy(t, snap, "infra", "only-a"), nil)
	gw := gatewayRef("infra", "gw")
	section := gw
	section.SectionName = "a"
	assert.Equal(t, []AncestorStatus{{AncestorRef: gw, Accepted: "InvalidTargetRef", Status: StatusOverridden, Contexts: 1, named: true,
		Targets: []TargetStatus{{TargetRef: section, Accepted: "InvalidTargetRef", Status: StatusOverridden, Contexts: 1}}}}, im.Ancestors)
	assert.Equal(t, "Direct policy on Gateway infra/gw section a: enforced on 0 of 1 path, overridden on 1", im.Summary(storedPolicy(t, snap, "infra", "only-a")))
}
