package testcrds

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefinedKinds(t *testing.T) {
	files, err := ModuleFiles(context.Background(), filepath.Join("..", ".."))
	require.NoError(t, err)
	byBase := map[string][]string{}
	for _, f := range files {
		kinds, err := definedKinds(f)
		require.NoError(t, err)
		byBase[filepath.Base(f)] = kinds
	}
	assert.Equal(t, []string{"gateway.networking.k8s.io/HTTPRoute"}, byBase["gateway.networking.k8s.io_httproutes.yaml"])
	assert.Equal(t, []string{"gateway.envoyproxy.io/BackendTrafficPolicy"}, byBase["gateway.envoyproxy.io_backendtrafficpolicies.yaml"])
	assert.Contains(t, byBase["customresourcedefinitions.gen.yaml"], "networking.istio.io/EnvoyFilter")
	assert.Contains(t, byBase["customresourcedefinitions.gen.yaml"], "extensions.istio.io/TrafficExtension")
	assert.NotContains(t, byBase, "gateway.envoyproxy.io_envoyproxies.yaml", "a kind the corpus does not use")
	assert.NotContains(t, byBase, "gateway.networking.k8s.io_vap_safeupgrades.yaml", "not a CRD")
}
