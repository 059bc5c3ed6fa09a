package kindsdrift

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func TestPolicyConditions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "types.go"), []byte(`package v1
const (
	PolicyConditionOverridden gwapiv1.PolicyConditionType = "Overridden"
	PolicyReasonOverridden gwapiv1.PolicyConditionReason = "Overridden"
	PolicyConditionAccepted PolicyConditionType = "Accepted"
	RouteConditionAccepted RouteConditionType = "RouteAccepted"
)
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "types_test.go"), []byte(`package v1
const X PolicyConditionType = "FromATest"
`), 0o644))
	types, reasons, err := PolicyConditions(dir, ".")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"Overridden": true, "Accepted": true}, types)
	assert.Equal(t, map[string]bool{"Overridden": true}, reasons)
}

// conditionSources are the folders of a source module that declare its policy conditions.
var conditionSources = map[string][]string{
	"gateway-api":   {"apis/v1"},
	"envoy-gateway": {"api/v1alpha1"},
}

// TestStatusConditionsNameTheImplementationsConditions requires every condition type and
// reason the status rules read (Gateway API's own rules, and each built-in row's whose
// implementation's module is served) to be one the implementation declares, at the versions
// of DefaultSources: Gateway API's apis/v1 (policy_types.go), Envoy Gateway's api/v1alpha1
// (shared_types.go: Overridden, Merged). An implementation's own rows may also read Gateway
// API's conditions. Kuadrant's module is not served; its rows cite the files read.
func TestStatusConditionsNameTheImplementationsConditions(t *testing.T) {
	declared := map[string][2]map[string]bool{}
	for _, src := range DefaultSources() {
		dirs, ok := conditionSources[src.Name]
		if !ok {
			continue
		}
		root, err := ModuleDir(context.Background(), src.Module, src.Version)
		if err != nil {
			if os.Getenv("CI") == "" && isFetchError(err) {
				t.Skipf("%s cannot be fetched (CI unset, so skipped): %v", src.Module, err)
			}
			t.Fatal(err)
		}
		types, reasons, err := PolicyConditions(root, dirs...)
		require.NoError(t, err)
		require.NotEmpty(t, types, "%s declares no policy condition types in %v", src.Module, dirs)
		for _, g := range src.Groups {
			declared[g] = [2]map[string]bool{types, reasons}
		}
	}
	gatewayAPI := declared["gateway.networking.k8s.io"]
	var unknown []string
	check := func(owner string, rules []kinds.StatusRule, own [2]map[string]bool) {
		for _, rule := range rules {
			for _, m := range rule.When {
				if !gatewayAPI[0][m.Type] && !own[0][m.Type] {
					unknown = append(unknown, owner+": condition type "+m.Type)
				}
				if m.Reason != "" && !gatewayAPI[1][m.Reason] && !own[1][m.Reason] {
					unknown = append(unknown, owner+": reason "+m.Reason)
				}
			}
		}
	}
	check("Gateway API's rules", kinds.GatewayAPIStatusRules, gatewayAPI)
	checked := 0
	for _, row := range kinds.BuiltinKindTable().Rows() {
		own, served := declared[row.Group]
		if !served || len(row.StatusConditions.Rules) == 0 {
			continue
		}
		checked++
		check(row.Group+"/"+row.Kind, row.StatusConditions.Rules, own)
	}
	sort.Strings(unknown)
	assert.Empty(t, unknown, "status rules read conditions the implementation does not declare")
	assert.Equal(t, 4, checked, "Envoy Gateway's BackendTrafficPolicy, ClientTrafficPolicy, SecurityPolicy and EnvoyExtensionPolicy rows")
}
