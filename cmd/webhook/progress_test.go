package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/policyattachment/webhook/pkg/clusterstate"
)

// poseAsTerminal makes isTerminal say that a bytes.Buffer is a terminal columns wide, for
// the length of the test.
func poseAsTerminal(t *testing.T, columns int) {
	t.Helper()
	was := isTerminal
	isTerminal = func(w io.Writer) (bool, int) {
		_, ok := w.(*bytes.Buffer)
		return ok, columns
	}
	t.Cleanup(func() { isTerminal = was })
}

// TestProgressOfAClusterRead: reading a cluster, a terminal gets one progress line, a pipe
// nothing, -v a line per kind (kubectl's -v=N taken too); the API server's warnings reach
// stderr in every case, as kubectl writes them.
func TestProgressOfAClusterRead(t *testing.T) {
	progress := func(t *testing.T, args ...string) *clusterstate.Progress {
		t.Helper()
		var c clusterFlags
		fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
		c.register(fs)
		require.NoError(t, fs.Parse(args))
		return c.progressOn(&bytes.Buffer{}, &rest.Config{})
	}
	t.Run("piped", func(t *testing.T) {
		assert.Equal(t, clusterstate.ProgressQuiet, progress(t).Mode())
		assert.Equal(t, clusterstate.ProgressVerbose, progress(t, "-v").Mode())
		assert.Equal(t, clusterstate.ProgressVerbose, progress(t, "--verbose").Mode())
		assert.Equal(t, clusterstate.ProgressVerbose, progress(t, "-v=6").Mode())
		assert.Equal(t, clusterstate.ProgressQuiet, progress(t, "-v=0").Mode())
		assert.Equal(t, clusterstate.ProgressQuiet, progress(t, "--verbose=false").Mode())
	})
	t.Run("terminal", func(t *testing.T) {
		poseAsTerminal(t, 80)
		assert.Equal(t, clusterstate.ProgressLine, progress(t).Mode())
		assert.Equal(t, clusterstate.ProgressVerbose, progress(t, "-v").Mode())
	})
	t.Run("not a level", func(t *testing.T) {
		var c clusterFlags
		fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.register(fs)
		assert.EqualError(t, fs.Parse([]string{"-v=loud"}), `invalid argument "loud" for "-v, --verbose" flag: want true, false or a level (0, 1, 2...)`)
	})
	t.Run("warnings", func(t *testing.T) {
		poseAsTerminal(t, 80)
		for _, args := range [][]string{nil, {"-v"}} {
			var c clusterFlags
			fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
			c.register(fs)
			require.NoError(t, fs.Parse(args))
			var stderr bytes.Buffer
			cfg := &rest.Config{}
			c.progressOn(&stderr, cfg).Done()
			for range 2 { // said once
				cfg.WarningHandler.HandleWarningHeader(299, "", "gateway.networking.k8s.io/v1beta1 HTTPRoute is deprecated")
			}
			assert.Equal(t, "Warning: gateway.networking.k8s.io/v1beta1 HTTPRoute is deprecated\n", stderr.String(), args)
		}
	})
}

// TestUninstallHasNoProgress: uninstall reads no cluster state, and takes no -v.
func TestUninstallHasNoProgress(t *testing.T) {
	code, _, errOut := runCLI(t, "", "uninstall", "-v")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "webhook uninstall: unknown shorthand flag: 'v' in -v\n")
}
