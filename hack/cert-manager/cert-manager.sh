#!/usr/bin/env bash
# cert-manager for make e2e-node, built here because this machine reaches no image registry:
# its controller, cainjector and webhook from the github.com/cert-manager/cert-manager module
# (our mains in hack/cert-manager/, see its README), each as a one-binary image (make
# image-tar's tool, user 1000 like upstream's images), and the install manifest rendered, as a
# cert-manager release renders its static manifest, from the Helm chart in the same module
# (the chart's defaults and the namespace from its deploy/manifests; CRDs included, the
# startup check left out), with these images and pullPolicy Never.
# Everything is cached outside the checkout; prints the folder holding images/*.tar and
# cert-manager.yaml.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."
REPO="$(pwd)"
CACHE="${POLICYATTACHMENT_CACHE:-${HOME:-/tmp}/.cache/policyattachment}"
VERSION="$(cd hack/cert-manager && go list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)"
OUT="$CACHE/cert-manager/$VERSION"
HELM="$(bash hack/release/helm.sh)"
t0=$(date +%s)
say() { echo "cert-manager: +$(( $(date +%s) - t0 ))s $*" >&2; }

mkdir -p "$OUT/images"
# The binaries are built from our mains as well as cert-manager's packages: rebuild when
# either changes (go's build cache makes an unchanged rebuild cheap, the images follow).
sources="$(cd hack/cert-manager && find . -name '*.go' -o -name 'go.mod' -o -name 'go.sum' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
if [ ! -x "$OUT/controller" ] || [ ! -x "$OUT/cainjector" ] || [ ! -x "$OUT/webhook" ] ||
  [ "$(cat "$OUT/sources.sha256" 2>/dev/null)" != "$sources" ]; then
  say "building controller, cainjector and webhook $VERSION (about 5 minutes the first time)"
  (cd hack/cert-manager && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$OUT/" ./controller ./cainjector ./webhook)
  echo "$sources" >"$OUT/sources.sha256"
fi
for c in controller cainjector webhook; do
  tar="$OUT/images/$c.tar"
  if [ ! -f "$tar" ] || [ "$OUT/$c" -nt "$tar" ]; then
    (cd "$REPO" && go run ./hack/release/imagetar -binary "$OUT/$c" -at "/$c" -user 1000 \
      -image "policyattachment-e2e/cert-manager-$c:$VERSION" -version "$VERSION" -o "$tar")
  fi
done

module="$(cd hack/cert-manager && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)"
image() { echo "--set $1.repository=policyattachment-e2e/cert-manager-$2 --set-string $1.tag=$VERSION --set $1.pullPolicy=Never"; }
# helm built by go install assumes Kubernetes v1.20 unless told, and the chart wants >= 1.22.
# shellcheck disable=SC2046
"$HELM" template cert-manager "$module/deploy/charts/cert-manager" --namespace cert-manager \
  --kube-version v1.34.4 --set crds.enabled=true --set startupapicheck.enabled=false \
  $(image image controller) $(image webhook.image webhook) $(image cainjector.image cainjector) \
  >"$OUT/chart.yaml"
{ cat "$module/deploy/manifests/01-namespace.yaml"; echo '---'; cat "$OUT/chart.yaml"; } >"$OUT/cert-manager.yaml"
say "ready: $(grep -c '^kind:' "$OUT/cert-manager.yaml") objects in $OUT/cert-manager.yaml"
echo "$OUT"
