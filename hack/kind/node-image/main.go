// Command kind-node-image writes, with no Docker engine and no registry, the images of a kind
// node image built here (hack/kind/node-image.sh, docs/kind-node-image.md):
//
//	kind-node-image images -bin DIR -pause FILE -proxy-root FILE -cni FILE -o DIR
//	kind-node-image node -root FILE -ref REF -o FILE
//
// images writes the images the node preloads for kubeadm and kind, as docker-archive
// tarballs (which `ctr images import` and `docker load` read). Each is one static binary built
// here from source (hack/kind/node-binaries.sh), the way hack/release/imagetar makes the webhook's
// image: kube-apiserver, kube-controller-manager and kube-scheduler at the Kubernetes
// version, etcd at -etcd-tag (kubeadm's etcd.local.imageTag) and pause at -pause-tag on an
// empty base; kube-proxy on -proxy-root, a small Debian root with iptables and conntrack,
// which it runs; and the one-node CNI daemon (hack/kind/cni) kind's default CNI manifest
// names. They are named under -repo (a local name, no registry host), which the cluster's
// kubeadm configuration names as its imageRepository.
//
// node writes the node image itself from a root filesystem tarball: kind's base image's
// entrypoint, stop signal and environment.
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/policyattachment/webhook/hack/release/imagebuild"
)

// defaultPath is the PATH of the images: kubeadm's static Pod manifests run the
// control-plane programs by name.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// The defaults: hack/kind/cluster.yaml and hack/kind/cni/default-cni.yaml name these
// images, and hack/kind/node-image.sh builds these versions.
const (
	defaultRepo     = "policyattachment"
	defaultK8s      = "v1.34.4"
	defaultEtcdTag  = "3.6.16"
	defaultPauseTag = "3.10.1"
	// cniImage is the image hack/kind/cni/default-cni.yaml names, under the repository.
	cniImage = "kind-cni:v1"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "images":
		err = images(os.Args[2:])
	case "node":
		err = node(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kind-node-image:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  kind-node-image images -bin DIR -pause FILE -proxy-root FILE -cni FILE -o DIR [-repo R] [-k8s V] [-etcd-tag T] [-pause-tag T]
  kind-node-image node -root FILE -ref REF -o FILE`)
	os.Exit(2)
}

func images(args []string) error {
	fs := flag.NewFlagSet("images", flag.ExitOnError)
	bin := fs.String("bin", "", "the folder of static binaries (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd)")
	pause := fs.String("pause", "", "the sandbox (pause) binary")
	proxyRoot := fs.String("proxy-root", "", "a root filesystem tarball with iptables and conntrack, kube-proxy's base")
	cni := fs.String("cni", "", "the CNI daemon's static binary (hack/kind/cni)")
	repo := fs.String("repo", defaultRepo, "the repository the images are named under (kubeadm's imageRepository)")
	k8s := fs.String("k8s", defaultK8s, "the Kubernetes version: the control-plane images' tag")
	etcdTag := fs.String("etcd-tag", defaultEtcdTag, "the etcd image's tag")
	pauseTag := fs.String("pause-tag", defaultPauseTag, "the pause image's tag")
	out := fs.String("o", "", "the folder to write one tarball per image into")
	_ = fs.Parse(args)
	if *bin == "" || *pause == "" || *proxyRoot == "" || *cni == "" || *out == "" || fs.NArg() > 0 {
		usage()
	}
	specs := imageSpecs(*repo, *k8s, *etcdTag, *pauseTag, *bin, *pause, *proxyRoot, *cni)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	refs := make([]string, 0, len(specs))
	for ref := range specs {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		s := specs[ref]
		s.Env = []string{defaultPath}
		s.Labels = map[string]string{"org.opencontainers.image.title": path.Base(s.At)}
		file := filepath.Join(*out, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
		if err := write(ref, file, func() (v1.Image, error) { return imagebuild.Image(s) }); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		fmt.Println(file)
	}
	return nil
}

// imageSpecs is every image the node preloads, by name: those kubeadm asks for under
// imageRepository (CoreDNS aside: the cluster's DNS is off) and the CNI daemon.
func imageSpecs(repo, k8s, etcdTag, pauseTag, bin, pause, proxyRoot, cni string) map[string]imagebuild.Spec {
	specs := map[string]imagebuild.Spec{
		repo + "/pause:" + pauseTag: {Binary: pause, At: "/pause", User: "65535:65535"},
		repo + "/etcd:" + etcdTag:   {Binary: filepath.Join(bin, "etcd"), At: "/usr/local/bin/etcd", User: "0"},
		repo + "/kube-proxy:" + k8s: {Binary: filepath.Join(bin, "kube-proxy"), At: "/usr/local/bin/kube-proxy", User: "0", Base: proxyRoot},
		repo + "/" + cniImage:       {Binary: cni, At: "/kind-cni", User: "0"},
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		specs[repo+"/"+c+":"+k8s] = imagebuild.Spec{Binary: filepath.Join(bin, c), At: "/usr/local/bin/" + c, User: "0"}
	}
	return specs
}

func node(args []string) error {
	fs := flag.NewFlagSet("node", flag.ExitOnError)
	root := fs.String("root", "", "the node's root filesystem as an uncompressed tarball")
	ref := fs.String("ref", "", "the node image's name, e.g. policyattachment/kind-node:v1.34.4")
	out := fs.String("o", "", "the docker-archive tarball to write")
	_ = fs.Parse(args)
	if *root == "" || *ref == "" || *out == "" || fs.NArg() > 0 {
		usage()
	}
	return write(*ref, *out, func() (v1.Image, error) { return nodeImage(*root) })
}

// nodeImage is the root filesystem with the config kind's base image has (its
// Dockerfile's ENV, STOPSIGNAL and ENTRYPOINT): the entrypoint prepares the container and
// hands over to systemd, which stops on SIGRTMIN+3.
func nodeImage(root string) (v1.Image, error) {
	return imagebuild.Image(imagebuild.Spec{Base: root, Env: []string{defaultPath, "container=docker"},
		Entrypoint: []string{"/usr/local/bin/entrypoint", "/sbin/init"}, StopSignal: "SIGRTMIN+3"})
}

// write writes the image build makes as a docker-archive tarball at out, named ref.
func write(ref, out string, build func() (v1.Image, error)) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	img, err := build()
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, r, img)
}
