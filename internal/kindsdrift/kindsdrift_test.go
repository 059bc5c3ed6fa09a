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

// knownDrift is every fact on which a built-in row contradicts its implementation's CRD at
// the versions of DefaultSources, with why it stands. One entry per fact; an entry whose
// drift is gone fails the test too, so the table stays exact. A new drift fails until the
// row is fixed or the drift is listed here with its reason.
var knownDrift = map[string]string{
	// A CEL rule of the CRD limits one field to some target kinds; the row format has a
	// place for that only for the strategy field (strategy.targetKinds). The API server
	// applies the rule before the webhook; `check` does not see it (issue 28).
	"gateway.envoyproxy.io/BackendTrafficPolicy fieldTargetKinds admissionControl": "per-field target rule the row format cannot hold yet; enforced by the API server",
}

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

// TestBuiltinRowsAgainstCRDs reads the CRDs of DefaultSources from the module cache
// (downloading them once) and fails on drift knownDrift does not list, on a listed drift
// that is gone, and on a built-in kind that is neither checked nor listed as unchecked.
func TestBuiltinRowsAgainstCRDs(t *testing.T) {
	res, err := Check(context.Background(), kinds.BuiltinKindTable().Rows(), DefaultSources())
	if err != nil {
		if os.Getenv("CI") == "" && isFetchError(err) {
			t.Skipf("the implementations' CRD modules cannot be fetched (CI unset, so skipped; in CI this fails): %v", err)
		}
		t.Fatalf("reading the implementations' CRDs from their Go modules: %v\n"+
			"The check needs the module proxy once (then the module cache): `go mod download <module>@<version>` for each of DefaultSources.", err)
	}

	var unexpected []string
	seen := map[string]bool{}
	for _, d := range res.Drift {
		seen[d.Key()] = true
		if _, ok := knownDrift[d.Key()]; !ok {
			unexpected = append(unexpected, d.String())
		}
	}
	sort.Strings(unexpected)
	assert.Empty(t, unexpected, "drift between the rows and their CRDs (fix the row, or list the drift in knownDrift with its reason):\n%s", strings.Join(unexpected, "\n"))

	var gone []string
	for k := range knownDrift {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	assert.Empty(t, gone, "knownDrift lists drift that is gone (the row was fixed): remove these entries")

	assert.Equal(t, sortedKeys(unchecked), sortedKeys(res.Unchecked), "built-in kinds with no CRD to check them against: say why in `unchecked`, or add a source")
	for k, where := range res.Checked {
		t.Logf("%s checked against %s", k, where)
	}
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

// The Gateway API CRDs checked are those of the version go.mod requires.
func TestGatewayAPISourceFollowsGoMod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/gateway-api (v\S+)`).FindSubmatch(data)
	require.NotNil(t, m, "go.mod requires no sigs.k8s.io/gateway-api")
	for _, s := range DefaultSources() {
		if s.Module == "sigs.k8s.io/gateway-api" {
			assert.Equal(t, string(m[1]), s.Version, "DefaultSources' Gateway API version")
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
