#!/usr/bin/env bash
# Builds a kind node image with no registry, from Debian's packages and Kubernetes built from
# source, caches it outside the checkout, loads it into Docker (DOCKER_HOST, as
# hack/kind/docker.sh prints it) and prints its name. docs/kind-node-image.md says what kind
# expects of a node image and where this one differs from kind's published one.
#
#   kind create cluster --image "$(hack/kind/node-image.sh)" --config hack/kind/cluster.yaml
#
# The image is a docker-archive tarball in
#   ${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/kind-node/node-v<k8s>-kind-<v>-<recipe>/node.tar
# named policyattachment/kind-node:v<k8s>-<recipe>, where <recipe> is a hash of the files
# that make it: a change to any of them makes a new image, and a second run finds the
# tarball and only loads it (or does nothing when Docker has it). NO_LOAD=1 skips Docker.
#
# What it holds:
#  - a Debian root (debootstrap, the suite this machine runs, its apt sources and updates)
#    with the packages kind's base image installs that a cluster uses, containerd, runc and
#    the CNI plugins;
#  - kind's base files from its module (entrypoint, systemd units, containerd config), set
#    up as kind's base Dockerfile does, with containerd's sandbox image set to ours;
#  - the kubelet (hack/realnode/node-binaries.sh), kubeadm and kubectl (hack/kind/node-binaries.sh);
#  - preloaded in its containerd, as kind preloads them: kube-apiserver,
#    kube-controller-manager, kube-scheduler, etcd and pause images (static binaries, no
#    base), kube-proxy's on a small Debian root with iptables and conntrack, and the CNI
#    daemon's (hack/kind/cni), all named under the local repository "policyattachment"
#    (hack/kind/node-image writes them);
#  - /kind/manifests: hack/kind/cni/default-cni.yaml and hack/kind/default-storage.yaml.
#
# Needs root (debootstrap, chroot, a private mount namespace for the preload). Cold, with
# the Kubernetes binaries cached, it takes a few minutes; see docs/kind-node-image.md.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."
REPO="$(pwd)"
t0=$(date +%s)
log() { printf 'kind-node-image: +%ss %s\n' "$(( $(date +%s) - t0 ))" "$*" >&2; }

# shellcheck source=../lib/versions.sh
. hack/lib/versions.sh
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
PAUSE_TAG=3.10.1

# The files that make the image, and etcd's version; Kubernetes and kind are named by theirs.
recipe_files=(hack/kind/node-image.sh hack/kind/iptables-wrapper hack/kind/default-storage.yaml
  hack/kind/cni/default-cni.yaml hack/kind/node-image/main.go hack/release/imagebuild/imagebuild.go)
for f in hack/kind/cni/*.go hack/realnode/pause/*.go; do
  case "$f" in *_test.go) ;; *) recipe_files+=("$f");; esac
done
recipe="$({ cat "${recipe_files[@]}"; echo "etcd $ETCD_VERSION"; } | sha256sum | cut -c1-12)"
REF="policyattachment/kind-node:v$K8S_VERSION-$recipe"
DIR="$CACHE/kind-node/node-v$K8S_VERSION-kind-$KIND_VERSION-$recipe"
TAR="$DIR/node.tar"

# load loads the image into Docker unless it has it, and removes the images of other
# recipes from Docker and the cache: each is some 400 MB, and only the newest is used.
load() {
  local old
  for old in "$CACHE/kind-node/node-v$K8S_VERSION-kind-$KIND_VERSION"-*; do
    [ "$old" = "$DIR" ] || [ ! -d "$old" ] || { log "removing an older recipe's image: $old"; rm -rf "$old"; }
  done
  if [ -n "${NO_LOAD:-}" ]; then
    log "built: $TAR ($REF)"
    echo "$REF"
    return
  fi
  if docker image inspect "$REF" >/dev/null 2>&1; then
    log "Docker has $REF"
  else
    log "loading $TAR into Docker..."
    docker load -i "$TAR" >/dev/null
  fi
  for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' policyattachment/kind-node); do
    [ "$old" = "$REF" ] || docker image rm "$old" >/dev/null 2>&1 || true
  done
  echo "$REF"
}
if [ -f "$TAR" ]; then
  load
  exit 0
fi

[ "$(id -u)" = 0 ] || { echo "kind-node-image: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

log "building the Kubernetes programs (cached outside the checkout)"
BIN="$(bash hack/kind/node-binaries.sh)"
NODE_BIN="$(bash hack/realnode/node-binaries.sh)"

WORK="$(mktemp -d /var/tmp/kind-node.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# kind's base image files, from its module in the Go module cache.
KIND_SRC="$(cd "$WORK" && "$GO" mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
[ -d "$KIND_SRC/images/base/files" ] || { echo "kind-node-image: no images/base/files in $KIND_SRC" >&2; exit 1; }

# The suite and mirror this machine's apt uses: the root gets the same packages, and the
# repository names no mirror.
SUITE="$(. /etc/os-release && echo "$VERSION_CODENAME")"
mirror() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
    awk -v s="$SUITE" '$2 == s {print $1; exit}'
}
MIRROR="$(mirror)"
if [ -z "$MIRROR" ]; then
  apt-get update -qq # apt's lists name the sources only once fetched
  MIRROR="$(mirror)"
fi
[ -n "$MIRROR" ] || { echo "kind-node-image: apt has no source for $SUITE (apt-get indextargets)" >&2; exit 1; }

# in_root ROOT CMD...: CMD chrooted into ROOT with /proc, /sys and a /run of its own, in a
# private mount namespace, so nothing is left mounted whatever happens.
in_root() {
  local root="$1"; shift
  unshare --mount --fork -- sh -ec 'r="$1"; shift
    mount -t proc proc "$r/proc"; mount -t sysfs sysfs "$r/sys"; mount -t tmpfs tmpfs "$r/run"
    exec chroot "$r" "$@"' _ "$root" "$@"
}

# debian_root DIR PACKAGES: a minimal Debian root holding PACKAGES, brought up to date from
# this machine's apt sources (security updates included), with apt's caches and the
# documentation removed.
debian_root() {
  local root="$1" packages="$2"
  debootstrap --variant=minbase --include="$packages" "$SUITE" "$root" "$MIRROR" >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; return 1; }
  cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/"
  [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
  cp -a /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/"
  rm -f "$root"/etc/apt/sources.list.d/*.disabled* 2>/dev/null || true
  # No service starts while packages install in the root.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  in_root "$root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -qq >/dev/null' \
    >>"$root.log" 2>&1 || { tail -20 "$root.log" >&2; return 1; }
  rm -f "$root/usr/sbin/policy-rc.d"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log
}

NODE_PACKAGES=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,jq,procps,containerd,runc,containernetworking-plugins
log "making the node's Debian $SUITE root (debootstrap, then updates)"
debian_root "$WORK/root" "$NODE_PACKAGES" &
node_root=$!
log "making kube-proxy's Debian $SUITE root (iptables, conntrack)"
debian_root "$WORK/proxy" iptables,conntrack
wait "$node_root"

log "kube-proxy's root: iptables follows the node's backend (hack/kind/iptables-wrapper)"
install -m 0755 hack/kind/iptables-wrapper "$WORK/proxy/usr/sbin/iptables-wrapper"
for cmd in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf iptables-wrapper "$WORK/proxy/usr/sbin/$cmd"
done
tar --numeric-owner -C "$WORK/proxy" -cf "$WORK/proxy.tar" .

log "building the CNI daemon (hack/kind/cni) and writing the preloaded images"
CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$WORK/kind-cni" ./hack/kind/cni
"$GO" run ./hack/kind/node-image images -bin "$BIN" -pause "$NODE_BIN/pause" -proxy-root "$WORK/proxy.tar" \
  -cni "$WORK/kind-cni" -k8s "v$K8S_VERSION" -etcd-tag "$ETCD_VERSION" -pause-tag "$PAUSE_TAG" -o "$WORK/images" >/dev/null

log "kind's base files and set-up (kind $KIND_VERSION images/base)"
R="$WORK/root"
base="$KIND_SRC/images/base/files"
mkdir -p "$R/kind" "$R/LICENSES"
cp -r "$base/etc/." "$R/etc/"
cp -r "$base/kind/." "$R/kind/"
cp -r "$base/usr/." "$R/usr/"
cp -r "$base/LICENSES/." "$R/LICENSES/"
# The module cache's files are read-only; the image's are as kind's Dockerfile sets them.
chmod -R u+w,go+r "$R/kind" "$R/LICENSES" "$R/etc/containerd" "$R/etc/systemd/system" "$R/etc/default" "$R/etc/sysctl.d"
chmod 0644 "$R/etc/crictl.yaml"
chmod 0755 "$R/kind" "$R/kind/bin" "$R"/kind/bin/* "$R/usr/local/bin/entrypoint" "$R/usr/local/bin/clean-install"
# Debian's containerd is in /usr/bin; kind's unit runs /usr/local/bin/containerd.
ln -sf /usr/bin/containerd "$R/usr/local/bin/containerd"
# Our pause image, and no oom_score_adj below containerd's own: these machines withhold
# CAP_SYS_RESOURCE, which lowering it needs.
sed -i -E -e "s|^([[:space:]]*sandbox_image = ).*|\\1\"policyattachment/pause:$PAUSE_TAG\"|" \
  -e 's|^([[:space:]]*restrict_oom_score_adj = ).*|\1true|' "$R/etc/containerd/config.toml"
grep -q "policyattachment/pause:$PAUSE_TAG" "$R/etc/containerd/config.toml"
# kind's Dockerfile: systemd as init in a container.
find "$R/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
rm -f "$R"/lib/systemd/system/multi-user.target.wants/* "$R"/etc/systemd/system/*.wants/* \
  "$R"/lib/systemd/system/local-fs.target.wants/* "$R"/lib/systemd/system/sockets.target.wants/*udev* \
  "$R"/lib/systemd/system/sockets.target.wants/*initctl* "$R"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"$R/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$R/sbin/init"
in_root "$R" sh -ec 'systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
  systemctl mask systemd-binfmt.service >/dev/null 2>&1
  ctr oci spec | jq ".hooks.createContainer[.hooks.createContainer | length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}" |
    jq "del(.process.rlimits)" >/etc/containerd/cri-base.json'
mkdir -p "$R/etc/kubernetes/manifests" "$R/opt/cni" "$R/kind/manifests"
# The CNI plugins: Debian's, where kind's nodes keep theirs.
ln -sfn /usr/lib/cni "$R/opt/cni/bin"
install -m 0755 "$NODE_BIN/kubelet" "$BIN/kubeadm" "$BIN/kubectl" "$R/usr/bin/"
echo "v$K8S_VERSION" >"$R/kind/version"
install -m 0644 hack/kind/cni/default-cni.yaml "$R/kind/manifests/default-cni.yaml"
install -m 0644 hack/kind/default-storage.yaml "$R/kind/manifests/default-storage.yaml"

log "preloading the images into the node's containerd"
cat >"$R/tmp/preload.toml" <<'TOML'
version = 2
root = "/var/lib/containerd"
state = "/run/containerd-preload"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "/run/containerd-preload/containerd.sock"
TOML
unshare --mount --fork -- bash -ec 'r="$1"; images="$2"
  mount -t proc proc "$r/proc"; mount -t sysfs sysfs "$r/sys"; mount -t tmpfs tmpfs "$r/run"
  chroot "$r" containerd --config /tmp/preload.toml >"$images.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do [ -S "$r/run/containerd-preload/containerd.sock" ] && break; sleep 0.2; done
  for f in "$images"/*.tar; do
    chroot "$r" ctr --address /run/containerd-preload/containerd.sock --namespace=k8s.io images import \
      --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests - <"$f" >/dev/null
  done
  chroot "$r" ctr --address /run/containerd-preload/containerd.sock --namespace=k8s.io images ls -q | grep -v "^sha256:" >&2
  kill %1; wait || true' _ "$R" "$WORK/images"
rm -f "$R/tmp/preload.toml"

log "writing the node image $REF"
tar --numeric-owner -C "$R" -cf "$WORK/root.tar" .
mkdir -p "$DIR"
"$GO" run ./hack/kind/node-image node -root "$WORK/root.tar" -ref "$REF" -o "$WORK/node.tar"
mv "$WORK/node.tar" "$TAR"
log "cached: $TAR ($(du -h "$TAR" | cut -f1))"
load
