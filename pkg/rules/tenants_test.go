package rules_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/rulestest"
)

// The enumeration a tenant could run before: dry runs of `limits.rps` 1 to 200 on a
// Gateway where another namespace's policy sets 137. Every guess now gets the same verdict
// and the same text, so the dry runs tell nothing of the value. With
// messages.compareValuesAcrossNamespaces, exactly the right guess is admitted: the oracle
// that setting accepts, for single-team clusters.
func TestNoValueOracleAcrossNamespaces(t *testing.T) {
	table := kinds.BuiltinKindTable()
	snap := rulestest.World(t, table, rulestest.SharedGatewayWorld, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: limits, namespace: web, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {strategy: patch, limits: {rps: 137}}`)
	guess := func(config *rules.Config, rps int) string {
		p := rulestest.PolicyOf(t, table, fmt.Sprintf(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: probe, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  overrides: {strategy: patch, limits: {rps: %d}}`, rps))
		v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: p, Config: config}, snap)
		var b strings.Builder
		fmt.Fprintf(&b, "allowed=%v\n", v.Allowed())
		for _, e := range v.Denials {
			b.WriteString(e.Error() + "\n")
		}
		for _, w := range v.Warnings {
			b.WriteString("warning: " + w + "\n")
		}
		return b.String()
	}

	want := `allowed=false
spec.overrides.limits.rps: Forbidden: Conflicted: a ColorPolicy in namespace "web" on Gateway infra/gw also sets overrides "limits.rps"; ` + validation.AcrossNamespacesDetail + "\n"
	for rps := 1; rps <= 200; rps++ {
		require.Equal(t, want, guess(nil, rps), "guess %d", rps)
	}

	compare := &rules.Config{Messages: validation.Messages{CompareValuesAcrossNamespaces: true}}
	var admitted []int
	for rps := 1; rps <= 200; rps++ {
		if strings.HasPrefix(guess(compare, rps), "allowed=true") {
			admitted = append(admitted, rps)
		}
	}
	assert.Equal(t, []int{137}, admitted, "comparing values across namespaces tells the value")
}
