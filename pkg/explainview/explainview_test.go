package explainview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/test/harness/testkit"
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

// fullPage is the one case whose HTML golden is the whole page; the others' goldens hold
// what differs, with the inlined page.css and page.js left out (withoutAssets), so a
// change of style or script rewrites one golden, not every one.
const fullPage = "examples"

func TestGolden(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap, ex, target := explain(t, tc.in, tc.config, tc.target)
			for format, file := range formats {
				var b bytes.Buffer
				require.NoError(t, explainview.Write(&b, format, snap, ex, target))
				got := b.String()
				if format == "html" && name != fullPage {
					got = withoutAssets(t, got)
				}
				testkit.Golden(t, filepath.Join("testdata", name, file), got)
			}
		})
	}
}

// withoutAssets replaces the page's one inline style and one inline script, and their
// hashes in its Content-Security-Policy, by placeholders.
func withoutAssets(t *testing.T, page string) string {
	t.Helper()
	styles, scripts := styleRE.FindAllStringSubmatch(page, -1), scriptRE.FindAllStringSubmatch(page, -1)
	require.Len(t, styles, 1)
	require.Len(t, scripts, 1)
	return strings.NewReplacer(
		styles[0][0], "<style>/* page.css */</style>",
		scripts[0][0], "<script>/* page.js */</script>",
		// html/template writes a hash's "+" as "&#43;".
		strings.ReplaceAll(sum(styles[0][1]), "+", "&#43;"), "(page.css)",
		strings.ReplaceAll(sum(scripts[0][1]), "+", "&#43;"), "(page.js)",
	).Replace(page)
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
