#!/usr/bin/env bash
# Builds the node side of the real one-node cluster `make e2e-node` runs (kubelet,
# kube-controller-manager, kube-scheduler, kube-proxy) from k8s.io/kubernetes through the Go
# module proxy, in one `go build` sharing the build cache with hack/control-plane/control-plane.sh, and the
# node's sandbox (pause) program; prints the folder that holds them:
#   ${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/node/k8s-<v>
# About 2 to 4 minutes the first time on 2 cores; later calls return at once.
set -euo pipefail

HACK="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=../lib/versions.sh
. "$HACK/lib/versions.sh"
# shellcheck source=../lib/k8s-module.sh
. "$HACK/lib/k8s-module.sh"
DEST="$CACHE/node/k8s-$K8S_VERSION"
log() { echo "node-binaries: $*" >&2; }

mkdir -p "$DEST"
need=()
for b in kubelet kube-controller-manager kube-scheduler kube-proxy; do
  [ -x "$DEST/$b" ] || need+=("$b")
done
if [ "${#need[@]}" -gt 0 ]; then
  log "building ${need[*]} v$K8S_VERSION from source (2 to 4 minutes the first time)..."
  mkdir -p "$DEST/.module"
  (
    cd "$DEST/.module"
    k8s_module node.local/k8s kubelet kube-controller-manager kube-scheduler kube-proxy
    pkgs=()
    for b in "${need[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    "$GO" build -ldflags "$(k8s_ldflags)" -o "$DEST/" "${pkgs[@]}"
  )
fi
if [ ! -x "$DEST/pause" ]; then
  log "building the sandbox (pause) program..."
  (. "$HACK/lib/toolchain.sh" && cd "$HACK/.." && CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$DEST/pause" ./hack/realnode/pause)
fi
log "ready: $DEST"
echo "$DEST"
