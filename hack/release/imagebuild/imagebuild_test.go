package imagebuild

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entries lists a layer's tar entries as "name type mode uid".
func entries(t *testing.T, l v1.Layer) []tar.Header {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, tar.Header{Name: h.Name, Typeflag: h.Typeflag, Mode: h.Mode, Size: h.Size})
	}
}

func TestLayer(t *testing.T) {
	l, err := Layer([]byte("bin"), "/webhook", false)
	require.NoError(t, err)
	assert.Equal(t, []tar.Header{{Name: "webhook", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3}}, entries(t, l))

	l, err = Layer([]byte("bin"), "/usr/local/bin/etcd", true)
	require.NoError(t, err)
	assert.Equal(t, []tar.Header{
		{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/local/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/local/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "usr/local/bin/etcd", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3},
	}, entries(t, l))
	mt, err := l.MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCILayer, mt)

	_, err = Layer(nil, "webhook", false)
	assert.EqualError(t, err, `"webhook": the binary's path in the image is absolute`)
}

func TestImage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.WriteFile(bin, []byte("bin"), 0o755))
	img, err := Image(Spec{Binary: bin, At: "/webhook", User: "65532:65532", Labels: map[string]string{"a": "b"}})
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux/amd64", cfg.OS+"/"+cfg.Architecture)
	assert.Equal(t, []string{"/webhook"}, cfg.Config.Entrypoint)
	assert.Equal(t, "65532:65532", cfg.Config.User)
	assert.Equal(t, map[string]string{"a": "b"}, cfg.Config.Labels)
	assert.Equal(t, time.Unix(0, 0).UTC(), cfg.Created.Time, "the same binary makes the same image")
	again, err := Image(Spec{Binary: bin, At: "/webhook", User: "65532:65532", Labels: map[string]string{"a": "b"}})
	require.NoError(t, err)
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	assert.Equal(t, d1, d2)

	when := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	oci, err := Image(Spec{Binary: bin, At: "/webhook", Arch: "arm64", Created: when, OCI: true})
	require.NoError(t, err)
	cfg, err = oci.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "arm64", cfg.Architecture)
	assert.Equal(t, when, cfg.Created.Time)
	assert.Equal(t, when, cfg.History[0].Created.Time)
	mt, err := oci.MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCIManifestSchema1, mt)
}

func TestImageOnABase(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.WriteFile(bin, []byte("bin"), 0o755))
	var root bytes.Buffer
	tw := tar.NewWriter(&root)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "usr/", Mode: 0o755}))
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "usr/iptables", Linkname: "xtables", Mode: 0o777}))
	require.NoError(t, tw.Close())
	base := filepath.Join(dir, "root.tar")
	require.NoError(t, os.WriteFile(base, root.Bytes(), 0o644))

	img, err := Image(Spec{Binary: bin, At: "/usr/local/bin/kube-proxy", User: "0", Base: base})
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2)
	assert.Equal(t, []tar.Header{
		{Typeflag: tar.TypeDir, Name: "usr/", Mode: 0o755},
		{Typeflag: tar.TypeSymlink, Name: "usr/iptables", Mode: 0o777},
	}, entries(t, layers[0]), "the base comes first, unchanged")
	assert.Equal(t, "usr/local/bin/kube-proxy", entries(t, layers[1])[len(entries(t, layers[1]))-1].Name)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/kube-proxy"}, cfg.Config.Entrypoint)

	_, err = Image(Spec{Binary: bin, At: "/x", Base: filepath.Join(dir, "missing.tar")})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestImageOfABaseAlone(t *testing.T) {
	dir := t.TempDir()
	var root bytes.Buffer
	tw := tar.NewWriter(&root)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "sbin/", Mode: 0o755}))
	require.NoError(t, tw.Close())
	base := filepath.Join(dir, "root.tar")
	require.NoError(t, os.WriteFile(base, root.Bytes(), 0o644))

	img, err := Image(Spec{Base: base, Entrypoint: []string{"/sbin/init"}, StopSignal: "SIGRTMIN+3"})
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	assert.Equal(t, []tar.Header{{Typeflag: tar.TypeDir, Name: "sbin/", Mode: 0o755}}, entries(t, layers[0]))
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/sbin/init"}, cfg.Config.Entrypoint)
	assert.Equal(t, "SIGRTMIN+3", cfg.Config.StopSignal)

	_, err = Image(Spec{})
	assert.EqualError(t, err, "an image needs a binary or a base")
}
