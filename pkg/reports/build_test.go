package reports

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/validation"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestBuild: each namespace's Report, as a golden file; app's says that its Gateway policy
// conflicts with, and its route policy is overridden by, a ColorPolicy in namespace
// payments, and holds neither that policy's name nor its value. With
// messages.revealOtherNamespaces it names both.
func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		golden string
		config *rules.Config
	}{
		{"want.yaml", nil},
		{"want-revealed.yaml", &rules.Config{Messages: validation.Messages{RevealOtherNamespaces: true}}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			snap, _, err := check.StateFromFiles([]string{filepath.Join("testdata", "tenants", "in.yaml")}, kinds.BuiltinKindTable())
			require.NoError(t, err)
			built := Build(snap, tc.config)
			require.Equal(t, []string{"app", "payments"}, slices.Sorted(maps.Keys(built)))
			var out strings.Builder
			for _, namespace := range slices.Sorted(maps.Keys(built)) {
				data, err := yaml.Marshal(built[namespace])
				require.NoError(t, err)
				out.WriteString("---\n")
				out.Write(data)
			}
			testkit.Golden(t, filepath.Join("testdata", "tenants", tc.golden), out.String())
			app, err := yaml.Marshal(built["app"])
			require.NoError(t, err)
			if tc.config == nil {
				assert.NotContains(t, string(app), "payments-secret-policy")
				assert.NotContains(t, string(app), "payments-internal-token-abc123")
			} else {
				assert.Contains(t, string(app), "payments-secret-policy")
			}
			assert.Equal(t, built, Build(snap, tc.config), "a function of the state")
		})
	}
}

// TestBuildWithStatuses: a result per disagreement between what a controller wrote into a
// policy's status and the prediction (rule prediction, warn, both sides in its message and
// properties), beside each policy's impact with its ancestors and targets (GEP-5058), as
// golden files over testdata/status.
func TestBuildWithStatuses(t *testing.T) {
	for _, impl := range []string{"envoy-gateway", "gateway-api", "kuadrant"} {
		t.Run(impl, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "status", impl, "in.yaml"))
			require.NoError(t, err)
			docs, err := manifests.Decode("in.yaml", data)
			require.NoError(t, err)
			state, err := check.StateOf(docs, kinds.BuiltinKindTable())
			require.NoError(t, err)
			snap, observed := state.SnapshotWithStatuses()
			built := BuildWith(snap, nil, observed)
			var out strings.Builder
			predictions := 0
			for _, namespace := range slices.Sorted(maps.Keys(built)) {
				for _, r := range built[namespace].Results {
					if r.Rule == RulePrediction {
						predictions++
						assert.Equal(t, "warn", string(r.Result))
						assert.NotEmpty(t, r.Properties["theirs"])
						assert.NotEmpty(t, r.Properties["predicted"])
					}
				}
				data, err := yaml.Marshal(built[namespace])
				require.NoError(t, err)
				out.WriteString("---\n")
				out.Write(data)
			}
			assert.Equal(t, 2-btoi(impl == "gateway-api"), predictions)
			testkit.Golden(t, filepath.Join("testdata", "status", impl+".yaml"), out.String())
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
