package rules_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPureBoundary keeps the engine (pkg/rules and every package under it), the index
// (pkg/index) and the CRD comparison (pkg/crdfacts) free of transport: they may use API types, but must not import net/http
// themselves, nor depend on client-go or controller-runtime at all.
func TestPureBoundary(t *testing.T) {
	pure := []string{"./...", "../index/...", "../crdfacts/..."}
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}"}, pure...)...).Output()
	require.NoError(t, err)
	packages := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.GreaterOrEqual(t, len(packages), 8, "the engine's packages and the index")
	for _, line := range packages {
		pkg, imports, _ := strings.Cut(line, ": ")
		require.NotContains(t, strings.Fields(imports), "net/http", "%s imports net/http", pkg)
	}
	out, err = exec.Command("go", append([]string{"list", "-deps"}, pure...)...).Output()
	require.NoError(t, err)
	for _, dep := range strings.Split(string(out), "\n") {
		for _, forbidden := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime"} {
			require.False(t, strings.HasPrefix(dep, forbidden), "the engine or the index depends on %s", dep)
		}
	}
}
