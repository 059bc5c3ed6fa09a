package kindsdrift

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// unchecked is every built-in kind no source module serves the CRD of, and why. A CRD not
// served as a Go module enters testdata only as the facts read from it (project rule), so
// these rows are checked by reading alone.
var unchecked = map[string]string{
	"agentgateway.dev/AgentgatewayPolicy":      notServed("github.com/agentgateway/agentgateway"),
	"extensions.kuadrant.io/OIDCPolicy":        notServed("github.com/kuadrant/kuadrant-operator"),
	"extensions.kuadrant.io/PlanPolicy":        notServed("github.com/kuadrant/kuadrant-operator"),
	"extensions.kuadrant.io/TelemetryPolicy":   notServed("github.com/kuadrant/kuadrant-operator"),
	"extensions.kuadrant.io/ThreatPolicy":      notServed("github.com/kuadrant/kuadrant-operator"),
	"gateway.kgateway.dev/BackendConfigPolicy": notServed("github.com/kgateway-dev/kgateway/v2"),
	"gateway.kgateway.dev/HTTPListenerPolicy":  notServed("github.com/kgateway-dev/kgateway/v2"),
	"gateway.kgateway.dev/ListenerPolicy":      notServed("github.com/kgateway-dev/kgateway/v2"),
	"gateway.kgateway.dev/TrafficPolicy":       notServed("github.com/kgateway-dev/kgateway/v2"),
	"gateway.nginx.org/ClientSettingsPolicy":   notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/ObservabilityPolicy":    notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/PayloadProcessor":       notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/ProxySettingsPolicy":    notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/RateLimitPolicy":        notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/SnippetsPolicy":         notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/UpstreamSettingsPolicy": notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"gateway.nginx.org/WAFPolicy":              notServed("github.com/nginx/nginx-gateway-fabric/v2"),
	"kuadrant.io/AuthPolicy":                   notServed("github.com/kuadrant/kuadrant-operator"),
	"kuadrant.io/DNSPolicy":                    notServed("github.com/kuadrant/kuadrant-operator"),
	"kuadrant.io/RateLimitPolicy":              notServed("github.com/kuadrant/kuadrant-operator"),
	"kuadrant.io/TLSPolicy":                    notServed("github.com/kuadrant/kuadrant-operator"),
	"kuadrant.io/TokenRateLimitPolicy":         notServed("github.com/kuadrant/kuadrant-operator"),
	"policy.linkerd.io/AuthorizationPolicy":    notServed("github.com/linkerd/linkerd2"),
	"policies.controller.io/ColorPolicy":       "GEP-713's example kind: no implementation ships a CRD for it",

	// Envoy AI Gateway: rows read from envoyproxy/ai-gateway v1.1.0 (c217da8a) by hand.
	"aigateway.envoyproxy.io/BackendSecurityPolicy": notServed("github.com/envoyproxy/ai-gateway"),
	"aigateway.envoyproxy.io/QuotaPolicy":           notServed("github.com/envoyproxy/ai-gateway"),

	// GKE: rows read from GoogleCloudPlatform/gke-gateway-api fc40d606 and GKE's docs.
	"networking.gke.io/GCPBackendPolicy":             notServed("github.com/GoogleCloudPlatform/gke-gateway-api"),
	"networking.gke.io/HealthCheckPolicy":            notServed("github.com/GoogleCloudPlatform/gke-gateway-api"),
	"networking.gke.io/GCPGatewayPolicy":             notServed("github.com/GoogleCloudPlatform/gke-gateway-api"),
	"networking.gke.io/GCPTrafficDistributionPolicy": notServed("github.com/GoogleCloudPlatform/gke-gateway-api"),
	// AWS Gateway API controller: rows read from aws/aws-application-networking-k8s v2.1.3.
	"application-networking.k8s.aws/TargetGroupPolicy":    notServed("github.com/aws/aws-application-networking-k8s"),
	"application-networking.k8s.aws/IAMAuthPolicy":        notServed("github.com/aws/aws-application-networking-k8s"),
	"application-networking.k8s.aws/VpcAssociationPolicy": notServed("github.com/aws/aws-application-networking-k8s"),
	"application-networking.k8s.aws/AccessLogPolicy":      notServed("github.com/aws/aws-application-networking-k8s"),
	// Linkerd: read from linkerd2 edge-26.8.3.
	"policy.linkerd.io/HTTPLocalRateLimitPolicy": notServed("github.com/linkerd/linkerd2"),
}

func notServed(module string) string {
	return module + " is not served by the Go module proxy (it answers 403 for it)"
}

// uncheckedAtOlder is, for each further release a source is checked at (AlsoAt), the
// built-in kinds of its groups that release ships no CRD for, and why.
var uncheckedAtOlder = map[string]map[string]string{
	"gateway-api@v1.6.3": {
		"gateway.networking.x-k8s.io/XTelemetryPolicy": "its module ships no CRD for it",
	},
}

// TestBuiltinRowsAgainstCRDs reads the CRDs of DefaultSources from the module cache
// (downloading them once), in every pass (each source's Version, then each of its AlsoAt
// releases), and fails on drift KnownDrift does not list, on a listed drift no pass shows,
// on a built-in kind that is neither checked nor listed as unchecked, and on a CRD labelled
// gateway.networking.k8s.io/policy that no row describes.
func TestBuiltinRowsAgainstCRDs(t *testing.T) {
	passes, err := CheckPasses(context.Background(), kinds.BuiltinKindTable().Rows(), DefaultSources())
	if err != nil {
		if os.Getenv("CI") == "" && isFetchError(err) {
			t.Skipf("the implementations' CRD modules cannot be fetched (CI unset, so skipped; in CI this fails): %v", err)
		}
		t.Fatalf("reading the implementations' CRDs from their Go modules: %v\n"+
			"The check needs the module proxy once (then the module cache): `go mod download <module>@<version>` for each of DefaultSources.", err)
	}
	require.Len(t, passes, 2, "every source at its Version, then Gateway API at v1.6.3")

	var unexpected []string
	seen := map[string]bool{}
	for _, p := range passes {
		for _, d := range p.Result.Drift {
			seen[d.Key()] = true
			if _, ok := KnownDrift[d.Key()]; !ok {
				unexpected = append(unexpected, p.Name()+": "+d.String())
			}
		}
		assert.Empty(t, p.Unlisted, "%s: CRDs labelled %s with no built-in row: add a row for each", p.Name(), PolicyLabel)
	}
	sort.Strings(unexpected)
	assert.Empty(t, unexpected, "drift between the rows and their CRDs (fix the row, or list the drift in KnownDrift with its reason):\n%s", strings.Join(unexpected, "\n"))

	var gone []string
	for k := range KnownDrift {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	assert.Empty(t, gone, "KnownDrift lists drift that is gone (the row was fixed): remove these entries")

	first := passes[0]
	assert.Equal(t, sortedKeys(unchecked), sortedKeys(first.Result.Unchecked), "built-in kinds with no CRD to check them against: say why in `unchecked`, or add a source")
	for k, where := range first.Result.Checked {
		t.Logf("%s checked against %s", k, where)
	}
	for _, p := range passes[1:] {
		got := map[string]string{}
		for k, why := range p.Result.Unchecked {
			if group, _, _ := strings.Cut(k, "/"); p.Serves(group) {
				got[k] = why
			}
		}
		assert.Equal(t, uncheckedAtOlder[p.Name()], got, "%s: built-in kinds of its groups it ships no CRD for", p.Name())
		assert.NotEmpty(t, p.Result.Checked, p.Name())
		for k, where := range p.Result.Checked {
			t.Logf("%s checked against %s", k, where)
		}
	}
}

// Passes reads every source at its Version first, then each further release alone.
func TestPasses(t *testing.T) {
	a := Source{Name: "a", Version: "v2", AlsoAt: []string{"v1", "v0"}}
	b := Source{Name: "b", Version: "v9"}
	got := Passes([]Source{a, b})
	assert.Equal(t, [][]Source{
		{{Name: "a", Version: "v2"}, {Name: "b", Version: "v9"}},
		{{Name: "a", Version: "v1"}},
		{{Name: "a", Version: "v0"}},
	}, got)
	assert.Equal(t, []string{"v1", "v0"}, a.AlsoAt, "the sources given are not changed")
	assert.Equal(t, "a@v2, b@v9", Pass{Sources: got[0]}.Name())
}

// A policy-labelled CRD no row describes is listed, whatever its group; labelled CRDs with a
// row, CRDs without the label and other documents are not.
func TestUnlistedPolicyKinds(t *testing.T) {
	dir := t.TempDir()
	crd := func(group, kind, labels string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n" + labels +
			"spec:\n  group: " + group + "\n  names: {kind: " + kind + "}\n  versions: [{name: v1, served: true, storage: true}]\n"
	}
	labelled := "  labels:\n    gateway.networking.k8s.io/policy: Direct\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "crds"), 0o755))
	for name, body := range map[string]string{
		"a.yaml": crd("example.io", "NewPolicy", labelled) + "---\n" + crd("example.io", "KnownPolicy", labelled),
		"b.yaml": crd("other.example.io", "OtherPolicy", "  labels:\n    gateway.networking.k8s.io/policy: Inherited\n"),
		"c.yaml": crd("example.io", "Route", "  labels:\n    app: x\n") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: gateway.networking.k8s.io/policy}\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "crds", name), []byte(body), 0o644))
	}
	src := Source{Name: "s", Module: "example.io/m", Version: "v1.0.0", Globs: []string{"crds/*.yaml"}, Groups: []string{"example.io"}}
	rows := []*kinds.KindRow{{Group: "example.io", Kind: "KnownPolicy"}}
	got, err := UnlistedPolicyKinds(dir, src, rows)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"example.io/NewPolicy (example.io/m@v1.0.0 crds/a.yaml)",
		"other.example.io/OtherPolicy (example.io/m@v1.0.0 crds/b.yaml)",
	}, got)

	crds, err := LoadCRDs(dir, src)
	require.NoError(t, err)
	assert.Equal(t, "Direct", crds["example.io/NewPolicy"].PolicyLabel)
	assert.Equal(t, "", crds["example.io/Route"].PolicyLabel)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isFetchError tells a module that cannot be downloaded from a CRD that cannot be read.
func isFetchError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "go mod download")
}

func TestModuleDirReportsAFetchError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	_, err := ModuleDir(context.Background(), "example.invalid/no-such-module", "v0.0.1")
	require.Error(t, err)
	assert.True(t, isFetchError(err), "%v", err)
	assert.False(t, isFetchError(errors.New("no CRD file matches")))
}

func TestEscapePath(t *testing.T) {
	assert.Equal(t, "github.com/!azure/go-!s!d!k", escapePath("github.com/Azure/go-SDK"))
}

// The Gateway API CRDs checked first are those of the version go.mod requires; v1.6.3 is
// checked too, as clusters run it.
func TestGatewayAPISourceFollowsGoMod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/gateway-api (v\S+)`).FindSubmatch(data)
	require.NotNil(t, m, "go.mod requires no sigs.k8s.io/gateway-api")
	for _, s := range DefaultSources() {
		if s.Module == "sigs.k8s.io/gateway-api" {
			assert.Equal(t, string(m[1]), s.Version, "DefaultSources' Gateway API version")
			assert.Equal(t, []string{"v1.6.3"}, s.AlsoAt, "the older Gateway API release the rows are checked at")
			return
		}
	}
	t.Fatal("DefaultSources has no sigs.k8s.io/gateway-api")
}

// A built-in row checked against a source says it was read at that source's version: its
// readAt is what `webhook kinds --cluster` and the CRDDrift warnings cite.
func TestCheckedRowsSayTheyWereReadAtTheirSource(t *testing.T) {
	for _, src := range DefaultSources() {
		for _, row := range kinds.BuiltinKindTable().Rows() {
			if slices.Contains(src.Groups, row.Group) {
				assert.True(t, strings.HasSuffix(row.ReadAt, " "+src.Version), "%s/%s readAt %q, checked against %s@%s", row.Group, row.Kind, row.ReadAt, src.Module, src.Version)
			}
		}
	}
}
