#!/usr/bin/env bash
# Builds kind from its Go module (sigs.k8s.io/kind), once per machine and version, outside the
# checkout (like hack/oracles/egctl.sh), and prints the binary's path. `make e2e-kind` creates its
# cluster with it, so no kind release has to be downloaded.
#
# KIND_VERSION picks the module version. Cold, the build takes about a minute on 2 cores
# (measured: see issue 31); later runs print the cached path at once.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"

GO=${GO:-go}
KIND_VERSION=${KIND_VERSION:-v0.33.0}
CACHE=${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/kind/$KIND_VERSION
BIN=$CACHE/kind
if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
echo "building kind $KIND_VERSION from its module into $CACHE" >&2
mkdir -p "$CACHE"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# From an empty folder: `go install module@version` outside any module uses kind's own go.mod.
(cd "$tmp" && GOBIN="$tmp" GOFLAGS=-buildvcs=false "$GO" install "sigs.k8s.io/kind@$KIND_VERSION")
mv "$tmp/kind" "$BIN"
echo "$BIN"
