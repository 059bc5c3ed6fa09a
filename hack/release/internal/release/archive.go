package release

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations on index.json's one entry, which name the image when it is imported.
const (
	// AnnotationImageName is the full reference containerd (ctr images import, kind load
	// image-archive) and Docker's containerd image store store the image under.
	AnnotationImageName = "io.containerd.image.name"
	// AnnotationRefName is the OCI layout's reference name: the tag, as `docker save` writes
	// it (skopeo's oci-archive:FILE:TAG selects by it).
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// DockerManifestEntry is one entry of a docker-archive manifest.json.
type DockerManifestEntry struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// WriteArchive writes idx, an index of single-platform images, to w as an OCI image layout
// tarball:
//
//	oci-layout      {"imageLayoutVersion": "1.0.0"}
//	index.json      one entry: idx, annotated with tag's full name and its tag
//	blobs/sha256/   idx, each image's manifest and config, each layer (gzip)
//	manifest.json   docker-archive's list: each image, tagged tag, linux/amd64 last
//
// containerd (`ctr images import`, so `kind load image-archive`), Docker's containerd image
// store and skopeo read index.json and take the platform they run on; Docker's classic
// image store reads manifest.json, where the last entry of a tag wins, so without
// `docker load --platform` it tags linux/amd64. The entries are written in a fixed order
// with a fixed time: the same index makes the same bytes.
func WriteArchive(w io.Writer, idx v1.ImageIndex, tag name.Tag) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	written := map[v1.Hash]bool{}
	blob := func(h v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
		if written[h] {
			return nil
		}
		written[h] = true
		rc, err := open()
		if err != nil {
			return err
		}
		defer rc.Close()
		if err := tw.WriteHeader(header(path.Join("blobs", h.Algorithm, h.Hex), size)); err != nil {
			return err
		}
		n, err := io.Copy(tw, rc)
		if err == nil && n != size {
			err = fmt.Errorf("blob %s: wrote %d bytes, its descriptor says %d", h, n, size)
		}
		return err
	}
	bytesBlob := func(h v1.Hash, data []byte) error {
		return blob(h, int64(len(data)), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	}
	var docker []DockerManifestEntry
	var amd64 *DockerManifestEntry
	for _, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return fmt.Errorf("image %s: %w", desc.Digest, err)
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		entry := DockerManifestEntry{RepoTags: []string{tag.String()}}
		for _, l := range layers {
			h, err := l.Digest()
			if err != nil {
				return err
			}
			size, err := l.Size()
			if err != nil {
				return err
			}
			if err := blob(h, size, l.Compressed); err != nil {
				return err
			}
			entry.Layers = append(entry.Layers, blobPath(h))
		}
		cfgName, err := img.ConfigName()
		if err != nil {
			return err
		}
		cfg, err := img.RawConfigFile()
		if err != nil {
			return err
		}
		if err := bytesBlob(cfgName, cfg); err != nil {
			return err
		}
		entry.Config = blobPath(cfgName)
		raw, err := img.RawManifest()
		if err != nil {
			return err
		}
		if err := bytesBlob(desc.Digest, raw); err != nil {
			return err
		}
		if desc.Platform != nil && desc.Platform.Architecture == "amd64" {
			amd64 = &entry
			continue
		}
		docker = append(docker, entry)
	}
	if amd64 != nil {
		docker = append(docker, *amd64)
	}
	rawIndex, err := idx.RawManifest()
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if err := bytesBlob(digest, rawIndex); err != nil {
		return err
	}
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIImageIndex,
			Size:      int64(len(rawIndex)),
			Digest:    digest,
			Annotations: map[string]string{
				AnnotationImageName: FullName(tag),
				AnnotationRefName:   tag.TagStr(),
			},
		}},
	}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"oci-layout", map[string]string{"imageLayoutVersion": "1.0.0"}},
		{"index.json", top},
		{"manifest.json", docker},
	} {
		data, err := json.Marshal(f.v)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(header(f.name, int64(len(data)))); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// FullName is tag as containerd and Docker name images: registry, repository and tag in
// full, the default registry by its short name (go-containerregistry's "index." prefix
// dropped), as a pull of the short reference stores it.
func FullName(tag name.Tag) string {
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = strings.TrimPrefix(name.DefaultRegistry, "index.")
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr()
}

func blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }

func header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
}

// Archive is an image archive read back: the index of platforms, the name index.json
// gives it, the docker-archive manifest.json.
type Archive struct {
	Index     v1.ImageIndex
	Name      string // index.json's io.containerd.image.name
	RefName   string // index.json's org.opencontainers.image.ref.name
	Docker    []DockerManifestEntry
	LayoutDir string // where the archive was unpacked: ReadArchive's dir
}

// ReadArchive unpacks the archive at file into dir (which it creates) and reads it as an OCI
// image layout, as `crane push --index` or skopeo would: index.json must hold exactly one
// image index.
func ReadArchive(file, dir string) (*Archive, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := untar(f, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := checkBlobs(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) != 1 || im.Manifests[0].MediaType != types.OCIImageIndex {
		return nil, fmt.Errorf("%s: index.json should hold one image index, holds %d entries", file, len(im.Manifests))
	}
	a := &Archive{LayoutDir: dir, Name: im.Manifests[0].Annotations[AnnotationImageName], RefName: im.Manifests[0].Annotations[AnnotationRefName]}
	if a.Index, err = top.ImageIndex(im.Manifests[0].Digest); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &a.Docker); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	return a, nil
}

// Platform is one image of an index, read back.
type Platform struct {
	Platform v1.Platform
	Image    v1.Image
	Config   *v1.ConfigFile
}

// Platforms lists the index's images with their platforms, in the index's order.
func Platforms(idx v1.ImageIndex) ([]Platform, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Platform
	for _, d := range im.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("index entry %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		out = append(out, Platform{Platform: *d.Platform, Image: img, Config: cfg})
	}
	return out, nil
}

// ExtractBinary writes the image's /webhook to file (mode 0755): the image must hold that
// one file and nothing else.
func ExtractBinary(img v1.Image, file string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	if len(layers) != 1 {
		return fmt.Errorf("the image has %d layers, want 1", len(layers))
	}
	if mt, err := layers[0].MediaType(); err != nil || mt != types.OCILayer {
		return fmt.Errorf("layer media type %q (%v), want %q", mt, err, types.OCILayer)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if len(cfg.RootFS.DiffIDs) != 1 {
		return fmt.Errorf("the config lists %d layers, want 1", len(cfg.RootFS.DiffIDs))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	diffID := sha256.New()
	tr := tar.NewReader(io.TeeReader(rc, diffID))
	hdr, err := tr.Next()
	if err != nil {
		return err
	}
	if hdr.Name != binaryName || hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o755 || hdr.Uid != 0 {
		return fmt.Errorf("the layer's first entry is %q (type %c, mode %o, uid %d), want the regular file %q, mode 755, root's", hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, binaryName)
	}
	out, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, tr); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if hdr, err := tr.Next(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("the layer holds %q besides %q", hdr.Name, binaryName)
		}
		return err
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	if got := "sha256:" + hex.EncodeToString(diffID.Sum(nil)); got != cfg.RootFS.DiffIDs[0].String() {
		return fmt.Errorf("the layer's content is %s, the config's diff_id %s", got, cfg.RootFS.DiffIDs[0])
	}
	return nil
}

// untar writes the regular files of r under dir, refusing names that leave it.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		clean := path.Clean(hdr.Name)
		if !filepath.IsLocal(clean) {
			return fmt.Errorf("entry %q leaves the archive", hdr.Name)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("entry %q is not a regular file", hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		f, err := os.Create(target)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// checkBlobs checks that every blob of the layout at dir has the digest its name says.
func checkBlobs(dir string) error {
	root := filepath.Join(dir, "blobs", "sha256")
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		sum, err := fileSHA256(filepath.Join(root, e.Name()))
		if err != nil {
			return err
		}
		if sum != e.Name() {
			return fmt.Errorf("blob sha256:%s has the digest sha256:%s", e.Name(), sum)
		}
	}
	return nil
}
