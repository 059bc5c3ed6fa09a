package deploy

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImageTar builds the image as `make image-tar` does and reads it back: one layer with
// the binary at /webhook, run as the Dockerfile's non-root user with its entrypoint, labelled
// with the version the binary itself reports.
func TestImageTar(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the binary")
	}
	root, dir := filepath.Join("..", ".."), t.TempDir()
	binary, archive := filepath.Join(dir, "webhook"), filepath.Join(dir, "image.tar")
	const version = "v9.8.7-test"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", binary, "./cmd/webhook")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	write := exec.Command("go", "run", "./hack/release/imagetar", "-binary", binary, "-image", "example.test/policyattachment/webhook:v9", "-version", version, "-o", archive)
	write.Dir = root
	out, err = write.CombinedOutput()
	require.NoError(t, err, string(out))

	img, err := tarball.ImageFromPath(archive, nil)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux", cfg.OS)
	assert.Equal(t, "amd64", cfg.Architecture)
	assert.Equal(t, []string{"/webhook"}, cfg.Config.Entrypoint)
	assert.Equal(t, version, cfg.Config.Labels["org.opencontainers.image.version"])
	assert.Equal(t, dockerfileInstruction(t, filepath.Join(root, "Dockerfile"), "USER"), cfg.Config.User, "the Dockerfile's user")
	assert.Equal(t, `["/webhook"]`, dockerfileInstruction(t, filepath.Join(root, "Dockerfile"), "ENTRYPOINT"), "the Dockerfile's entrypoint")

	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	require.NoError(t, err)
	assert.Equal(t, "webhook", hdr.Name)
	assert.Equal(t, int64(0o755), hdr.Mode)
	inImage := filepath.Join(dir, "from-image")
	f, err := os.OpenFile(inImage, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(f, tr)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = tr.Next()
	assert.Equal(t, io.EOF, err, "the image holds the binary and nothing else")

	out, err = exec.Command(inImage, "version").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "webhook "+version+"\n", string(out))
}

// dockerfileInstruction returns the arguments of the last instruction of that name.
func dockerfileInstruction(t *testing.T, dockerfile, instruction string) string {
	t.Helper()
	data, err := os.ReadFile(dockerfile)
	require.NoError(t, err)
	var last string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, instruction+" "); ok {
			last = strings.TrimSpace(rest)
		}
	}
	return last
}
