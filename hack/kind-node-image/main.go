// Command kind-node-image writes the container images a kind node image preloads for kubeadm,
// as docker-archive tarballs (which `ctr images import` and `docker load` read), with no
// Docker engine and no registry: each image is one static binary on an empty base, built here
// from source (hack/kind-node-binaries.sh), the way hack/imagetar makes the webhook's image.
//
//	go run ./hack/kind-node-image -bin "$(hack/kind-node-binaries.sh)" -pause "$(hack/node-binaries.sh)/pause" -o DIR
//
// The images are named under -repo (a local name, no registry host), which the kind cluster's
// kubeadm configuration names as its imageRepository, with the tags kubeadm asks for:
// kube-apiserver, kube-controller-manager and kube-scheduler at the Kubernetes version, etcd
// at -etcd-tag (kubeadm's etcd.local.imageTag), pause at -pause-tag. kube-proxy and CoreDNS are
// not made here: kube-proxy needs iptables and conntrack in its image. See
// docs/kind-node-image.md (issue 31).
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/policyattachment/webhook/internal/imagebuild"
)

// image is one image to write: the binary from file goes at at, which is also the entrypoint.
type image struct {
	ref  string
	file string
	at   string
	user string
}

// defaultPath is the PATH of the images: kubeadm's static Pod manifests run the
// control-plane programs by name.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func main() {
	bin := flag.String("bin", "", "the folder of static binaries (kube-apiserver, kube-controller-manager, kube-scheduler, etcd)")
	pause := flag.String("pause", "", "the sandbox (pause) binary")
	repo := flag.String("repo", "policyattachment", "the repository the images are named under (kubeadm's imageRepository)")
	k8s := flag.String("k8s", "v1.34.4", "the Kubernetes version: the control-plane images' tag")
	etcdTag := flag.String("etcd-tag", "3.6.16", "the etcd image's tag")
	pauseTag := flag.String("pause-tag", "3.10.1", "the pause image's tag")
	out := flag.String("o", "", "the folder to write one tarball per image into")
	flag.Parse()
	if *bin == "" || *pause == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: kind-node-image -bin DIR -pause FILE -o DIR [-repo R] [-k8s V] [-etcd-tag T] [-pause-tag T]")
		os.Exit(2)
	}
	images := []image{
		{ref: *repo + "/pause:" + *pauseTag, file: *pause, at: "/pause", user: "65535:65535"},
		{ref: *repo + "/etcd:" + *etcdTag, file: filepath.Join(*bin, "etcd"), at: "/usr/local/bin/etcd", user: "0"},
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		images = append(images, image{ref: *repo + "/" + c + ":" + *k8s, file: filepath.Join(*bin, c), at: "/usr/local/bin/" + c, user: "0"})
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "kind-node-image:", err)
		os.Exit(1)
	}
	for _, im := range images {
		file := filepath.Join(*out, strings.NewReplacer("/", "_", ":", "_").Replace(im.ref)+".tar")
		if err := write(im, file); err != nil {
			fmt.Fprintf(os.Stderr, "kind-node-image: %s: %v\n", im.ref, err)
			os.Exit(1)
		}
		fmt.Println(file)
	}
}

// write writes im as a docker-archive tarball at out.
func write(im image, out string) error {
	ref, err := name.ParseReference(im.ref)
	if err != nil {
		return err
	}
	img, err := imagebuild.Image(imagebuild.Spec{Binary: im.file, At: im.at, User: im.user,
		Env: []string{defaultPath}, Labels: map[string]string{"org.opencontainers.image.title": path.Base(im.at)}})
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}
