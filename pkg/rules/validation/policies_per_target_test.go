package validation_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// kube-agentic-networking refuses a sixth XAccessPolicy at one target, whatever the sections
// (v0.1.0 pkg/controller/accesspolicy.go isPolicyUnderTargetLimit, LimitPerTargetExceeded).
func TestValidatePoliciesPerTarget(t *testing.T) {
	table := kinds.BuiltinKindTable()
	access := func(name, created, target string) string {
		meta := "{name: " + name + ", namespace: infra}"
		if created != "" {
			meta = "{name: " + name + ", namespace: infra, creationTimestamp: \"" + created + "\"}"
		}
		return `
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: ` + meta + `
spec:
  targetRefs: [` + target + `]
  rules: [{name: r, source: {type: ServiceAccount, serviceAccount: {name: a, namespace: infra}}}]`
	}
	const gw = `{group: gateway.networking.k8s.io, kind: Gateway, name: gw}`
	stored := func(n int) []string {
		docs := []string{rulestest.Topology}
		for i := range n {
			// Each names the Gateway, half through a listener: sections do not matter.
			target := gw
			if i%2 == 1 {
				target = `{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}`
			}
			docs = append(docs, access(fmt.Sprintf("old-%d", i), fmt.Sprintf("2024-01-01T00:00:0%dZ", i), target))
		}
		return docs
	}
	const detail = "Gateway infra/gw already has %d older policies of its kind (%s); the implementation accepts at most 5 XAccessPolicy per target and refuses the later ones"
	cases := map[string]struct {
		stored int
		policy string
		want   field.ErrorList
	}{
		"a fifth is accepted": {stored: 4, policy: access("new", "", gw)},
		"a sixth is refused": {stored: 5, policy: access("new", "", gw),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				fmt.Sprintf(detail, 5, "XAccessPolicy infra/old-0, XAccessPolicy infra/old-1, XAccessPolicy infra/old-2, XAccessPolicy infra/old-3, XAccessPolicy infra/old-4"))}},
		"past six, the first five are named": {stored: 7, policy: access("new", "", gw),
			want: field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
				fmt.Sprintf(detail, 7, "XAccessPolicy infra/old-0, XAccessPolicy infra/old-1, XAccessPolicy infra/old-2, XAccessPolicy infra/old-3, XAccessPolicy infra/old-4, 2 more"))}},
		"an update of one of the five oldest is judged against the older only": {stored: 6,
			policy: access("old-2", "2024-01-01T00:00:02Z", gw)},
		"a target that does not exist yet is not judged": {stored: 5,
			policy: access("new", "", `{group: gateway.networking.k8s.io, kind: Gateway, name: elsewhere}`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := rulestest.World(t, table, stored(tc.stored)...)
			got := validation.ValidatePoliciesPerTarget(rulestest.PolicyOf(t, table, tc.policy), snap, nil)
			rulestest.Matcher.Test(t, tc.want, got)
		})
	}
}

// And one ExternalAuth XAccessPolicy per target, the oldest (v0.1.0 isPolicyUnderTargetLimit:
// "An older ExternalAuth AccessPolicy already exists"); Allow policies beside it are fine.
func TestValidateOneExternalAuthPerTarget(t *testing.T) {
	table := kinds.BuiltinKindTable()
	policy := func(name, created, action string) string {
		meta := "{name: " + name + ", namespace: infra}"
		if created != "" {
			meta = "{name: " + name + ", namespace: infra, creationTimestamp: \"" + created + "\"}"
		}
		body := "action: Allow"
		if action == "ExternalAuth" {
			body = "action: ExternalAuth\n  externalAuth: {protocol: HTTP, http: {}, backendRef: {name: authz, port: 9000}}"
		}
		return `
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: ` + meta + `
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]
  ` + body
	}
	snap := rulestest.World(t, table, rulestest.Topology, policy("auth", "2024-01-01T00:00:00Z", "ExternalAuth"), policy("allow", "2024-01-01T00:00:01Z", "Allow"))
	rulestest.Matcher.Test(t, field.ErrorList{rulestest.ReasonErr(field.ErrorTypeForbidden, "spec.targetRefs[0]", validation.ReasonConflicted,
		"Gateway infra/gw already has XAccessPolicy infra/auth with action ExternalAuth; the implementation accepts one such XAccessPolicy per target and refuses the later ones")},
		validation.ValidatePoliciesPerTarget(rulestest.PolicyOf(t, table, policy("second-auth", "", "ExternalAuth")), snap, nil))
	rulestest.Matcher.Test(t, nil, validation.ValidatePoliciesPerTarget(rulestest.PolicyOf(t, table, policy("more-allow", "", "Allow")), snap, nil))
}
