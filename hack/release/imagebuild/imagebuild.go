// Package imagebuild makes container images of one static binary on an empty base, with no
// Docker engine and no registry: the webhook's image (hack/release/imagetar, `make image-tar`), the
// release's per-architecture images (hack/release/internal/release) and a kind node's control-plane
// images (hack/kind/node-image) are all this one shape, so one binary always makes the same
// layer whichever tool wrote it.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is one image: the binary's file, where it lands (also the entrypoint) and what the
// image's config says.
type Spec struct {
	Binary string // the static linux binary; none when only Base makes the image
	At     string // its absolute path in the image, e.g. /webhook
	// Base, when set, is an uncompressed tarball of a root filesystem laid beneath the
	// binary's layer, for a program that calls others (kube-proxy runs iptables), or the
	// whole image (a kind node's root).
	Base string
	// Entrypoint replaces the default one, the binary alone.
	Entrypoint []string
	StopSignal string
	User       string // the user the image runs as, e.g. 65532:65532
	Arch       string // GOARCH; amd64 when empty
	Env        []string
	Labels     map[string]string
	// Created is the config's and the layer history's time; the Unix epoch when zero, so
	// the same binary makes the same image.
	Created time.Time
	// OCI writes OCI media types (a release's index); Docker's otherwise, as `docker
	// load` archives carry.
	OCI bool
}

// Image builds the image Spec describes.
func Image(s Spec) (v1.Image, error) {
	var layers []v1.Layer
	if s.Base != "" {
		var opts []tarball.LayerOption
		if s.OCI {
			opts = append(opts, tarball.WithMediaType(types.OCILayer))
		}
		// Fastest compression: a root filesystem is hundreds of megabytes, and these
		// images are loaded on the same machine, not shipped.
		root, err := tarball.LayerFromFile(s.Base, append(opts, tarball.WithCompressionLevel(gzip.BestSpeed))...)
		if err != nil {
			return nil, err
		}
		layers = append(layers, root)
	}
	entrypoint := s.Entrypoint
	if s.Binary != "" {
		data, err := os.ReadFile(s.Binary)
		if err != nil {
			return nil, err
		}
		layer, err := Layer(data, s.At, s.OCI)
		if err != nil {
			return nil, err
		}
		layers = append(layers, layer)
		if entrypoint == nil {
			entrypoint = []string{path.Clean(s.At)}
		}
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("an image needs a binary or a base")
	}
	base := empty.Image
	if s.OCI {
		base = mutate.ConfigMediaType(mutate.MediaType(base, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	img, err := mutate.AppendLayers(base, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", s.Arch
	if cfg.Architecture == "" {
		cfg.Architecture = "amd64"
	}
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.StopSignal = s.StopSignal
	cfg.Config.Env = s.Env
	cfg.Config.User = s.User
	cfg.Config.Labels = s.Labels
	created := time.Unix(0, 0).UTC()
	if !s.Created.IsZero() {
		created = s.Created.UTC()
		for i := range cfg.History {
			cfg.History[i].Created = v1.Time{Time: created}
		}
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: created})
}

// Layer is one layer holding data at the absolute path at, with its parent folders, all
// owned by root, the file mode 0755.
func Layer(data []byte, at string, oci bool) (v1.Layer, error) {
	if !strings.HasPrefix(at, "/") {
		return nil, fmt.Errorf("%q: the binary's path in the image is absolute", at)
	}
	name := strings.TrimPrefix(path.Clean(at), "/")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var dirs []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		dirs = append([]string{d + "/"}, dirs...)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(data))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	var opts []tarball.LayerOption
	if oci {
		opts = append(opts, tarball.WithMediaType(types.OCILayer))
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, opts...)
}
