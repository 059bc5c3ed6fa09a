package testcrds

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFilesDefineEveryCorpusKind requires every kind the corpus uses, but the core group's,
// to be defined by exactly one returned file, so a scenario never meets a kind without its
// schema, nor a kind defined twice.
func TestFilesDefineEveryCorpusKind(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := Files(context.Background(), root)
	require.NoError(t, err)
	definedBy := map[string][]string{}
	for _, f := range files {
		kinds, err := definedKinds(f)
		require.NoError(t, err)
		require.NotEmpty(t, kinds, "%s defines no CustomResourceDefinition", f)
		for _, k := range kinds {
			definedBy[k] = append(definedBy[k], f)
		}
	}
	used, err := corpusKinds(filepath.Join(root, CorpusDir))
	require.NoError(t, err)
	for k := range used {
		if strings.HasPrefix(k, "/") {
			continue // Service, Namespace: built in
		}
		assert.Len(t, definedBy[k], 1, "%s: the files defining it", k)
	}
	for k, fs := range definedBy {
		assert.Len(t, fs, 1, "%s is defined by more than one file", k)
	}
}

func TestDefinedKinds(t *testing.T) {
	files, err := Files(context.Background(), filepath.Join("..", "..", ".."))
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
