package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildStageCopies returns the sources of the COPY lines of the Dockerfile's first stage
// (the build stage), skipping COPY --from, which reads another stage.
func buildStageCopies(t *testing.T, dockerfile string) []string {
	t.Helper()
	f, err := os.Open(dockerfile)
	require.NoError(t, err)
	defer f.Close()
	var srcs []string
	stage := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			stage++
		case "COPY":
			if stage != 1 || strings.HasPrefix(fields[1], "--from") {
				continue
			}
			srcs = append(srcs, fields[1:len(fields)-1]...)
		}
	}
	require.NoError(t, sc.Err())
	return srcs
}

// TestDockerfileBuildsFromWhatItCopies compiles ./cmd/webhook in a folder holding exactly
// what the Dockerfile's build stage copies, so a package the binary imports but the image
// build leaves out fails here instead of in every user's `docker build`.
func TestDockerfileBuildsFromWhatItCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the binary")
	}
	root := filepath.Join("..", "..")
	srcs := buildStageCopies(t, filepath.Join(root, "Dockerfile"))
	require.Contains(t, srcs, "go.mod")
	ctx := t.TempDir()
	for _, src := range srcs {
		out, err := exec.Command("cp", "-r", filepath.Join(root, src), filepath.Join(ctx, src)).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, "./cmd/webhook")
	cmd.Dir = ctx
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the Dockerfile's build stage copies %v and cannot build ./cmd/webhook:\n%s", srcs, out)
}
