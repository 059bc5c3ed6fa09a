// Command imagetar writes the webhook's container image as a docker-archive tarball, with
// no Docker engine: the static binary at /webhook on an empty base, run as the non-root
// user 65532 (the Dockerfile's distroless nonroot user), and nothing else. The webhook
// needs no CA bundle of the system (it trusts the cluster's CA from its ServiceAccount and
// serves its own certificate) and writes no file, so the image holds no other file.
//
//	go run ./hack/imagetar -binary bin/webhook-linux -image policyattachment/webhook:v1.2.3 -o bin/webhook-image.tar
//
// `ctr images import` and `docker load` read the tarball; kind loads it with
// `kind load image-archive`. -at and -user make other one-binary images the same way (the
// real node's sandbox image, hack/realnode.sh).
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the user the image runs as: distroless's nonroot, which the Deployment's
// securityContext also names.
const nonRoot = "65532:65532"

func main() {
	binary := flag.String("binary", "", "the static linux webhook binary to put at /webhook")
	image := flag.String("image", "", "the image reference to record, e.g. policyattachment/webhook:v1.2.3")
	version := flag.String("version", "", "the version to label the image with (org.opencontainers.image.version)")
	out := flag.String("o", "", "the tarball to write")
	at := flag.String("at", "/webhook", "where the binary lands in the image, and the entrypoint")
	user := flag.String("user", nonRoot, "the user the image runs as")
	flag.Parse()
	if *binary == "" || *image == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: imagetar -binary FILE -image REF [-version V] -o OUT.tar")
		os.Exit(2)
	}
	if err := write(*binary, *at, *user, *image, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "imagetar:", err)
		os.Exit(1)
	}
}

func write(binary, at, user, image, version, out string) error {
	ref, err := name.ParseReference(image)
	if err != nil {
		return fmt.Errorf("image %q: %w", image, err)
	}
	at = path.Clean("/" + at)
	layer, err := binaryLayer(binary, at[1:])
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{at}
	cfg.Config.User = user
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    "policyattachment-" + at[1:],
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if version != "" {
		cfg.Config.Labels["org.opencontainers.image.version"] = version
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	// A fixed time: the same binary makes the same image.
	if img, err = mutate.CreatedAt(img, v1.Time{Time: time.Unix(0, 0).UTC()}); err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}

// binaryLayer is one layer holding the binary at name (no leading slash, no folder),
// owned by root, mode 0755.
func binaryLayer(binary, name string) (v1.Layer, error) {
	if strings.Contains(name, "/") {
		return nil, fmt.Errorf("-at %q: the binary goes at the image's root, e.g. /webhook", "/"+name)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
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
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
}
