package rules

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPureBoundary keeps pkg/rules free of transport: it may use API types, but must not
// import net/http itself, nor depend on client-go or controller-runtime at all.
func TestPureBoundary(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", ".").Output()
	require.NoError(t, err)
	for _, imp := range strings.Split(string(out), "\n") {
		require.NotEqual(t, "net/http", imp, "pkg/rules imports net/http")
	}
	out, err = exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Split(string(out), "\n") {
		for _, forbidden := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime"} {
			require.False(t, strings.HasPrefix(dep, forbidden), "pkg/rules depends on %s", dep)
		}
	}
}
