#!/usr/bin/env bash
# Builds a real local control plane (kube-apiserver + etcd) from source through the Go module
# proxy, once per machine, and prints the folder that holds it (envtest's
# BinaryAssetsDirectory: kube-apiserver, etcd, kubectl).
#
# The folder is outside the checkout and keyed by version, so a fresh clone (CI) reuses it:
#   ${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/control-plane/k8s-<v>-etcd-<v>
# The first build takes 5 to 15 minutes on 2 cores (13 on the last fresh machine); later calls return at once.
set -euo pipefail

HACK="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=../lib/versions.sh
. "$HACK/lib/versions.sh"
# shellcheck source=../lib/k8s-module.sh
. "$HACK/lib/k8s-module.sh"
DEST="$CACHE/control-plane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
log() { echo "control-plane: $*" >&2; }

# An API server that reports another version than it is (a build without the version
# ldflags says v0.0.0-master) is rebuilt: Helm checks a chart's kubeVersion against it.
if [ -x "$DEST/kube-apiserver" ] && [ "$("$DEST/kube-apiserver" --version 2>/dev/null)" != "Kubernetes v$K8S_VERSION" ]; then
  rm -f "$DEST/kube-apiserver"
fi
if [ -x "$DEST/kube-apiserver" ] && [ -x "$DEST/etcd" ] && [ -x "$DEST/kubectl" ]; then
  echo "$DEST"
  exit 0
fi
mkdir -p "$DEST"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ ! -x "$DEST/kube-apiserver" ]; then
  log "building kube-apiserver v$K8S_VERSION from source (4 to 13 minutes the first time)..."
  mkdir -p "$work/apiserver"
  (
    cd "$work/apiserver"
    k8s_module controlplane.local/apiserver kube-apiserver
    "$GO" build -ldflags "$(k8s_ldflags)" -o "$DEST/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
fi

if [ ! -x "$DEST/etcd" ]; then
  log "building etcd v$ETCD_VERSION from source (under a minute)..."
  mkdir -p "$work/etcd"
  (
    cd "$work/etcd"
    "$GO" mod init controlplane.local/etcd >/dev/null 2>&1
    "$GO" mod edit -require="go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    cat > main.go <<'GO'
package main

import _ "go.etcd.io/etcd/server/v3/etcdmain"

func main() {}
GO
    "$GO" mod tidy >/dev/null 2>&1 || "$GO" mod tidy
    "$GO" build -o "$DEST/etcd" go.etcd.io/etcd/server/v3
  )
fi

if [ ! -x "$DEST/kubectl" ]; then
  if command -v kubectl >/dev/null 2>&1; then
    ln -sf "$(command -v kubectl)" "$DEST/kubectl"
  else
    log "building kubectl v$K8S_VERSION from source..."
    (cd "$work/apiserver" 2>/dev/null || { log "kubectl needs the kube-apiserver module; remove $DEST and retry"; exit 1; }
     "$GO" build -o "$DEST/kubectl" k8s.io/kubernetes/cmd/kubectl)
  fi
fi
log "ready: $DEST"
echo "$DEST"
