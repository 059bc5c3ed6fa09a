#!/usr/bin/env bash
# make e2e-kind: the e2e suite (test/e2e) against a kind cluster with cert-manager and the
# webhook installed as the README says, on this machine with no registry: Docker from
# Debian's packages (hack/kind/docker.sh, a dockerd of its own), kind from its module
# (hack/kind/kind.sh), a node image built here from Debian's packages and Kubernetes' source
# (hack/kind/node-image.sh), cert-manager from its module (hack/cert-manager/cert-manager.sh), all cached
# outside the checkout. The steps once the cluster runs are make e2e-node's
# (hack/lib/deploy.sh). docs/kind.md is the same steps for a user, and says where this node
# image differs from kind's published one. Needs root. Always deletes the cluster and stops
# the dockerd it started, even on failure.
#
#   hack/kind/e2e.sh                      the cert-manager overlay, as the README installs it
#   OVERLAY=plain-certs hack/kind/e2e.sh  the plain-certs overlay (certificates from `go run ./certs`)
#   E2E_RUN=Renewal hack/kind/e2e.sh      only the tests matching a go test -run pattern
#   KEEP_CLUSTER=1 hack/kind/e2e.sh       leave the cluster (and dockerd) running afterwards
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."
REPO="$(pwd)"
t0=$(date +%s)
step() { printf '\n== +%ss %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
# shellcheck source=../lib/deploy.sh
. hack/lib/deploy.sh

CLUSTER="${CLUSTER:-policyattachment-e2e}"
OVERLAY="${OVERLAY:-cert-manager}"
IMAGE_NAME=policyattachment/webhook
IMAGE_TAG=latest  # make image-tar's default, which deploy/base names: the README's steps
case "$OVERLAY" in cert-manager | plain-certs) ;; *) echo "OVERLAY is cert-manager or plain-certs" >&2; exit 2 ;; esac

step "Docker (Debian's package, a dockerd of its own), kind and kubectl (cached outside the checkout)"
# Stop dockerd at the end only if this run started it.
started_docker=1
if command -v docker >/dev/null && docker -H unix:///run/policyattachment-docker/docker.sock version >/dev/null 2>&1; then
  started_docker=
fi
docker_host="$(bash hack/kind/docker.sh)"
export DOCKER_HOST="$docker_host"
KIND="$(bash hack/kind/kind.sh)"
CONTROL_PLANE="$(bash hack/control-plane/control-plane.sh)"
export PATH="$(dirname "$KIND"):$CONTROL_PLANE:$PATH"
KUBECONFIG_FILE="$(mktemp)"
export KUBECONFIG="$KUBECONFIG_FILE"
cleanup() {
  status=$?
  if [ -n "${KEEP_CLUSTER:-}" ]; then
    echo "cluster kept: export KUBECONFIG=$KUBECONFIG_FILE DOCKER_HOST=$DOCKER_HOST PATH=$(dirname "$KIND"):\$PATH"
  else
    step "deleting the kind cluster $CLUSTER"
    kind delete cluster --name "$CLUSTER" || true
    rm -f "$KUBECONFIG_FILE"
    [ -z "$started_docker" ] || bash hack/kind/docker.sh stop
  fi
  exit $status
}
trap cleanup EXIT

step "the node image (hack/kind/node-image.sh, cached outside the checkout)"
NODE_IMAGE="$(bash hack/kind/node-image.sh)"

if [ "$OVERLAY" = cert-manager ]; then
  step "building cert-manager and rendering its manifest (cached outside the checkout)"
  CERT_MANAGER="$(bash hack/cert-manager/cert-manager.sh)"
fi
step "building the webhook's image $IMAGE_NAME:$IMAGE_TAG (make image-tar)"
make --no-print-directory image-tar IMAGE="$IMAGE_NAME:$IMAGE_TAG"

kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true

step "kind create cluster --image $NODE_IMAGE --config hack/kind/cluster.yaml"
kind create cluster --name "$CLUSTER" --image "$NODE_IMAGE" --config hack/kind/cluster.yaml \
  --kubeconfig "$KUBECONFIG_FILE" --wait 180s

step "kind load image-archive bin/webhook-image.tar"
kind load image-archive bin/webhook-image.tar --name "$CLUSTER"

step "installing the Gateway API CRDs and the test policy CRDs"
install_crds

options=
if [ "$OVERLAY" = cert-manager ]; then
  step "installing cert-manager: kind load image-archive of its images, then its manifest"
  for image in "$CERT_MANAGER"/images/*.tar; do
    kind load image-archive "$image" --name "$CLUSTER"
  done
  install_cert_manager "$CERT_MANAGER/cert-manager.yaml"
  # The recommended install carries the opt-in reports writer too, as on the real node.
  options=with-reports
fi

step "deploying the webhook: deploy/overlays/$OVERLAY, the image set by kustomize"
deploy_webhook "$OVERLAY" "$IMAGE_NAME" "$IMAGE_TAG" $options

step "running the e2e suite against the Deployment ($OVERLAY)"
run_suite
step "passed"
