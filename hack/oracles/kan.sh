#!/usr/bin/env bash
# Builds kube-agentic-networking's controller (cmd/agentic-net-controller) from its Go module,
# once per machine and version, outside the checkout, and prints the binary's path. `make
# oracle-kan` runs it against a local API server as the implementation's own judge of
# XAccessPolicies. `go install module@version` is refused here (the module proxy will not list
# the module's versions), so the build runs on a copy of the module's source in the cache.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."

GO=${GO:-go}
KAN_VERSION=${KAN_VERSION:-$(sed -n 's/.*Module: "sigs.k8s.io\/kube-agentic-networking", Version: "\(v[^"]*\)".*/\1/p' test/kindsdrift/source.go)}
CACHE=${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/kan/$KAN_VERSION
BIN=$CACHE/agentic-net-controller
if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
echo "building agentic-net-controller $KAN_VERSION from its module into $CACHE" >&2
dir=$($GO mod download -json "sigs.k8s.io/kube-agentic-networking@$KAN_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -f "$dir/go.mod" ] || { echo "kan.sh: module sigs.k8s.io/kube-agentic-networking@$KAN_VERSION not found" >&2; exit 1; }
rm -rf "$CACHE/src" && mkdir -p "$CACHE"
cp -r "$dir" "$CACHE/src" && chmod -R u+w "$CACHE/src"
cd "$CACHE/src"
$GO build -o "$BIN.tmp" ./cmd/agentic-net-controller
mv "$BIN.tmp" "$BIN"
echo "$BIN"
