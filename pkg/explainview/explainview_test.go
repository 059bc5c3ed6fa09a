package explainview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/internal/testkit"
	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// cases are explain inputs, each with its goldens in testdata/<name>/explain.{dot,mmd,html}.
var cases = map[string]struct {
	in     []string
	config string // a --config file, if any
	target string
}{
	// The repository's examples, as `make explain` shows them.
	"examples": {in: []string{"../../examples"}},
	// GEP-713's Example 2: defaults and overrides at Gateway and route.
	"gep-713-example-2": {in: []string{"../../cmd/webhook/testdata/explain/gep-713-example-2/in.yaml"}},
	// Kuadrant's matrix: both stanzas, Gateway, listener, route and rule levels.
	"kuadrant-matrix": {in: []string{"../../cmd/webhook/testdata/explain/kuadrant-matrix/in.yaml"}},
	// Envoy Gateway's keyed lists merged item by item.
	"envoy-gateway-strategic-merge": {in: []string{"../../cmd/webhook/testdata/explain/envoy-gateway-strategic-merge/in.yaml"}},
	// Markup, quotes and entities in names and values: escaped in every format.
	"hostile": {in: []string{"testdata/hostile/in.yaml"}},
	// A GatewayClass and a Namespace attachment above a Gateway, narrowed to one route.
	"class-and-namespace": {in: []string{"testdata/class-and-namespace/in.yaml"}, config: "testdata/class-and-namespace/config.yaml", target: "HTTPRoute/app/store"},
}

var formats = map[string]string{"dot": "explain.dot", "mermaid": "explain.mmd", "html": "explain.html"}

func TestGolden(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap, ex, target := explain(t, tc.in, tc.config, tc.target)
			for format, file := range formats {
				var b bytes.Buffer
				require.NoError(t, explainview.Write(&b, format, snap, ex, target))
				testkit.Golden(t, filepath.Join("testdata", name, file), b.String())
			}
		})
	}
}

// explain runs explain as `webhook explain -f in... [--config] [--target]` does.
func explain(t *testing.T, in []string, config, target string) (topology.State, impact.Explanation, *policy.TargetKey) {
	t.Helper()
	docs, err := manifests.Read(in, nil, manifests.Options{Recursive: true})
	require.NoError(t, err)
	table := kinds.BuiltinKindTable()
	if config != "" {
		data, err := os.ReadFile(config)
		require.NoError(t, err)
		_, err = rules.LoadConfig(data, config, table)
		require.NoError(t, err)
	}
	snap, err := check.State(docs, table)
	require.NoError(t, err)
	var key *policy.TargetKey
	if target != "" {
		k, err := topology.ParseTargetIn(target, "default")
		require.NoError(t, err)
		key = &k
	}
	return snap, impact.Explain(snap, table, key), key
}
