#!/usr/bin/env bash
# Prints the path of a helm binary at the version go.mod requires (the one test/deploy
# renders the chart with), built from its module once per machine and cached outside the
# checkout: this machine reaches no release download.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."
CACHE="${POLICYATTACHMENT_CACHE:-${HOME:-/tmp}/.cache/policyattachment}"
VERSION="$(go list -m -f '{{.Version}}' helm.sh/helm/v3)"
HELM="$CACHE/bin/helm-$VERSION"
if [ ! -x "$HELM" ]; then
  echo "helm: building $VERSION (about 2 minutes the first time)" >&2
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install "helm.sh/helm/v3/cmd/helm@$VERSION"
  mkdir -p "$(dirname "$HELM")" && mv "$tmp/helm" "$HELM" && rmdir "$tmp"
fi
echo "$HELM"
