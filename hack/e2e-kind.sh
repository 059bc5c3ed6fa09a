#!/usr/bin/env bash
# make e2e-kind: the same e2e suite (test/e2e) against a kind cluster with the webhook
# deployed from deploy/, by the same steps as make e2e-node (hack/lib/deploy.sh): only
# making the cluster and loading the image differ. Needs Docker, kind, kubectl and Go; it
# cannot run on our CI machines (no Docker engine), which run make e2e-node instead.
#
#   CERT_MANAGER=1 hack/e2e-kind.sh   # the cert-manager overlay (installs cert-manager)
#   hack/e2e-kind.sh                  # the plain-certs overlay (certificates from `go run ./certs`)
#   KEEP_CLUSTER=1 hack/e2e-kind.sh   # leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

CLUSTER="${CLUSTER:-policyattachment-e2e}"
IMAGE_NAME=policyattachment/webhook
IMAGE_TAG=e2e-kind
CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
KUBECONFIG_FILE="$(mktemp)"
export KUBECONFIG="$KUBECONFIG_FILE"

step() { printf '\n== %s\n' "$*"; }
# shellcheck source=lib/deploy.sh
. hack/lib/deploy.sh
cleanup() {
  if [ -z "${KEEP_CLUSTER:-}" ]; then
    step "deleting kind cluster $CLUSTER"
    kind delete cluster --name "$CLUSTER" || true
  else
    echo "cluster kept: export KUBECONFIG=$KUBECONFIG_FILE"
  fi
}
trap cleanup EXIT

step "creating kind cluster $CLUSTER"
kind create cluster --name "$CLUSTER" --kubeconfig "$KUBECONFIG_FILE" --wait 120s

step "building the image (make image-tar) and loading it into kind"
make --no-print-directory image-tar IMAGE="$IMAGE_NAME:$IMAGE_TAG"
kind load image-archive bin/webhook-image.tar --name "$CLUSTER"

step "installing the Gateway API CRDs and the test policy CRDs"
install_crds

overlay=plain-certs
if [ -n "${CERT_MANAGER:-}" ]; then
  overlay=cert-manager
  step "installing cert-manager $CERT_MANAGER_VERSION"
  install_cert_manager "https://github.com/cert-manager/cert-manager/releases/download/$CERT_MANAGER_VERSION/cert-manager.yaml"
fi

step "deploying the webhook ($overlay overlay), the image set by kustomize"
reports=
[ "$overlay" = cert-manager ] && reports=with-reports
deploy_webhook "$overlay" "$IMAGE_NAME" "$IMAGE_TAG" $reports

step "running the e2e suite"
run_suite
