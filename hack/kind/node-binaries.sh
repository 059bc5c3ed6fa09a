#!/usr/bin/env bash
# Builds the Kubernetes programs a kind node image needs beyond hack/realnode/node-binaries.sh's, from
# k8s.io/kubernetes and go.etcd.io/etcd through the Go module proxy, static (CGO_ENABLED=0,
# as Kubernetes' release images are: the control-plane images built from them hold no C
# library), and prints the folder that holds them:
#   ${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/kind-node/k8s-<v>-etcd-<v>/bin
# kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy (for images), kubeadm and
# kubectl (for the node itself) and etcd. See docs/kind-node-image.md (issue 31).
set -euo pipefail

HACK="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=../lib/versions.sh
. "$HACK/lib/versions.sh"
# shellcheck source=../lib/k8s-module.sh
. "$HACK/lib/k8s-module.sh"
TOP="$CACHE/kind-node/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
DEST="$TOP/bin"
log() { echo "kind-node-binaries: $*" >&2; }
export CGO_ENABLED=0

mkdir -p "$DEST"
cmds=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubeadm kubectl)
need=()
for b in "${cmds[@]}"; do
  [ -x "$DEST/$b" ] || need+=("$b")
done
if [ "${#need[@]}" -gt 0 ]; then
  log "building ${need[*]} v$K8S_VERSION from source, static..."
  mkdir -p "$TOP/.module"
  (
    cd "$TOP/.module"
    if [ ! -f kubectl.go ]; then
      k8s_module kindnode.local/k8s kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubeadm
      # kubectl's command lives in k8s.io/kubectl, not in a k8s.io/kubernetes/cmd/kubectl/app.
      printf 'package main\n\nimport _ "k8s.io/kubectl/pkg/cmd"\n' > kubectl.go
      "$GO" mod tidy >/dev/null 2>&1 || "$GO" mod tidy
    fi
    pkgs=()
    for b in "${need[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    "$GO" build -trimpath -ldflags "-s -w $(k8s_ldflags)" -o "$DEST/" "${pkgs[@]}"
  )
fi
if [ ! -x "$DEST/etcd" ]; then
  log "building etcd v$ETCD_VERSION from source, static..."
  mkdir -p "$TOP/.etcd"
  (
    cd "$TOP/.etcd"
    if [ ! -f go.mod ]; then
      "$GO" mod init kindnode.local/etcd >/dev/null 2>&1
      "$GO" mod edit -require="go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
      printf 'package main\n\nimport _ "go.etcd.io/etcd/server/v3/etcdmain"\n\nfunc main() {}\n' > main.go
      "$GO" mod tidy >/dev/null 2>&1 || "$GO" mod tidy
    fi
    "$GO" build -trimpath -ldflags '-s -w' -o "$DEST/etcd" go.etcd.io/etcd/server/v3
  )
fi
log "ready: $DEST"
echo "$DEST"
