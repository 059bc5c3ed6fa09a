package release

import (
	"fmt"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/policyattachment/webhook/hack/release/imagebuild"
)

// The image's shape, as hack/release/imagetar and the Dockerfile make it: the static binary at
// /webhook on an empty base, its entrypoint, run as distroless's nonroot user.
const (
	binaryName = "webhook"
	entrypoint = "/" + binaryName
	nonRoot    = "65532:65532"
)

// Architectures are the linux platforms a release's image index holds, in its order.
var Architectures = []string{"amd64", "arm64"}

// Binary is the static linux webhook binary built for one architecture.
type Binary struct {
	Arch string // GOARCH: amd64, arm64
	Path string
}

// ImageMeta is what the images are labelled with.
type ImageMeta struct {
	Version  string    // org.opencontainers.image.version
	Revision string    // org.opencontainers.image.revision (the commit), when known
	Created  time.Time // the config's created time: the commit's, so a rebuild is identical
}

// Image is the single-platform image for one binary: `make image-tar`'s image (the binary
// at /webhook, root, 0755; the Dockerfile's entrypoint and user), with OCI media types, the
// commit's time and revision.
func Image(bin Binary, meta ImageMeta) (v1.Image, error) {
	labels := map[string]string{
		"org.opencontainers.image.title":    "policyattachment-webhook",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  meta.Version,
	}
	if meta.Revision != "" {
		labels["org.opencontainers.image.revision"] = meta.Revision
	}
	return imagebuild.Image(imagebuild.Spec{Binary: bin.Path, At: entrypoint, User: nonRoot, Arch: bin.Arch,
		Labels: labels, Created: meta.Created, OCI: true})
}

// Index is the OCI image index of one image per binary, each described by its platform
// (linux/ARCH), in the order of Architectures.
func Index(bins []Binary, meta ImageMeta) (v1.ImageIndex, error) {
	bins = append([]Binary(nil), bins...)
	order := map[string]int{}
	for i, a := range Architectures {
		order[a] = i
	}
	sort.SliceStable(bins, func(i, j int) bool { return order[bins[i].Arch] < order[bins[j].Arch] })
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]bool{}
	for _, b := range bins {
		if seen[b.Arch] {
			return nil, fmt.Errorf("two binaries for %s", b.Arch)
		}
		seen[b.Arch] = true
		img, err := Image(b, meta)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", b.Arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        plainImage{img},
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: b.Arch}},
		})
	}
	return idx, nil
}

// plainImage is an image whose index descriptor carries no artifactType: go-containerregistry
// would copy the config's media type there, which no image a Docker build pushes has.
type plainImage struct{ v1.Image }

func (plainImage) ArtifactType() (string, error) { return "", nil }
