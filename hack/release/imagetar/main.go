// Command imagetar writes the webhook's container image as a docker-archive tarball, with
// no Docker engine: the static binary at /webhook on an empty base, run as the non-root
// user 65532 (the Dockerfile's distroless nonroot user), and nothing else. The webhook
// needs no CA bundle of the system (it trusts the cluster's CA from its ServiceAccount and
// serves its own certificate) and writes no file, so the image holds no other file.
//
//	go run ./hack/release/imagetar -binary bin/webhook-linux -image policyattachment/webhook:v1.2.3 -o bin/webhook-image.tar
//
// `ctr images import` and `docker load` read the tarball; kind loads it with
// `kind load image-archive`. -at and -user make other one-binary images the same way (the
// real node's sandbox image, hack/realnode/realnode.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/policyattachment/webhook/hack/release/imagebuild"
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
	if strings.Contains(at[1:], "/") {
		return fmt.Errorf("-at %q: the binary goes at the image's root, e.g. /webhook", at)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":    "policyattachment-" + at[1:],
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if version != "" {
		labels["org.opencontainers.image.version"] = version
	}
	img, err := imagebuild.Image(imagebuild.Spec{Binary: binary, At: at, User: user, Labels: labels})
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}
