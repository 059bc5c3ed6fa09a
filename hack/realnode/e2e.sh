#!/usr/bin/env bash
# make e2e-node: the e2e suite (test/e2e) against the webhook installed the way users install
# it, on a real one-node cluster on this machine (hack/realnode/realnode.sh): the image from
# `make image-tar`, the Gateway API and test CRDs, the shipped ServiceAccount, ClusterRole,
# Deployment, Service and webhook configurations through an overlay that changes only the
# image. Each overlay in turn: `kubectl apply -k deploy/overlays/plain-certs`, the suite, the
# README's uninstall; then cert-manager (hack/cert-manager/cert-manager.sh: built from its Go module, its
# release manifest rendered from its chart), `kubectl apply -k deploy/overlays/cert-manager`,
# the suite again (with a forced renewal); before that overlay, on the same node, the Helm
# chart: `helm install` (cert-manager certificates, the reports writer), the suite's denials,
# `helm uninstall` with its pre-delete hook (NO_CHART=1 skips it). Needs root; installs the Debian packages the node
# needs when they are missing. Always tears the node down, even on failure.
#
#   hack/realnode/e2e.sh                        everything, timed
#   OVERLAYS=plain-certs hack/realnode/e2e.sh   one overlay (plain-certs, cert-manager or both)
#   E2E_RUN=Renewal hack/realnode/e2e.sh        only the tests matching a go test -run pattern
#   KEEP_NODE=1 hack/realnode/e2e.sh            leave the node running (hack/realnode/realnode.sh down --purge stops it)
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."
REPO="$(pwd)"
t0=$(date +%s)
step() { printf '\n== +%ss %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
# shellcheck source=../lib/deploy.sh
. hack/lib/deploy.sh

if ! command -v containerd >/dev/null || ! command -v runc >/dev/null || [ ! -x /usr/lib/cni/bridge ] ||
   ! command -v iptables >/dev/null || ! command -v conntrack >/dev/null; then
  step "installing containerd, runc, the CNI plugins, iptables and conntrack (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    containerd runc containernetworking-plugins iptables conntrack >/dev/null
fi

step "building the control plane and the node (cached outside the checkout)"
CONTROL_PLANE="$(bash hack/control-plane/control-plane.sh)"
NODE_BIN="$(bash hack/realnode/node-binaries.sh)"
export CONTROL_PLANE NODE_BIN PATH="$CONTROL_PLANE:$PATH"
OVERLAYS="${OVERLAYS:-plain-certs cert-manager}"
case " $OVERLAYS " in *" cert-manager "*)
  step "building cert-manager and rendering its manifest (cached outside the checkout)"
  CERT_MANAGER="$(bash hack/cert-manager/cert-manager.sh)";;
esac

IMAGE_NAME=policyattachment/webhook
IMAGE_TAG=e2e-node
step "building the image $IMAGE_NAME:$IMAGE_TAG (make image-tar)"
make --no-print-directory image-tar IMAGE="$IMAGE_NAME:$IMAGE_TAG"

cleanup() {
  status=$?
  if [ -n "${KEEP_NODE:-}" ]; then
    echo "node kept: export KUBECONFIG=/var/lib/policyattachment-node/pki/admin.kubeconfig"
  else
    step "tearing the node down"
    bash hack/realnode/realnode.sh down --purge
  fi
  exit $status
}
trap cleanup EXIT
bash hack/realnode/realnode.sh down --purge >/dev/null 2>&1 || true

export KUBECONFIG=/var/lib/policyattachment-node/pki/admin.kubeconfig
node_up() {
  step "starting the node"
  bash hack/realnode/realnode.sh up
  bash hack/realnode/realnode.sh import bin/webhook-image.tar
  step "installing the Gateway API CRDs and the test policy CRDs"
  install_crds
}

node_up
previous=
for overlay in $OVERLAYS; do
  if [ -n "$previous" ]; then
    step "uninstalling the $previous overlay as the README says (webhook configurations first)"
    undeploy_webhook "$previous"
    # The suite leaves its objects behind; the next overlay gets a cluster of its own.
    step "a fresh node for the next overlay"
    bash hack/realnode/realnode.sh down --purge
    node_up
  fi
  if [ "$overlay" = cert-manager ]; then
    step "installing cert-manager: its images, then its manifest as its documentation says"
    bash hack/realnode/realnode.sh import "$CERT_MANAGER"/images/*.tar
    install_cert_manager "$CERT_MANAGER/cert-manager.yaml"
    if [ -z "${NO_CHART:-}" ]; then
      step "installing the Helm chart (deploy/chart: cert-manager certificates, reports on), the image set by values"
      deploy_chart "$IMAGE_NAME" "$IMAGE_TAG"
      step "the chart's webhook denies what the suite's first test expects"
      run_suite '^TestDenials$'
      step "helm uninstall: the pre-delete hook removes the webhook configurations first"
      undeploy_chart
    fi
  fi
  step "deploying the webhook: deploy/overlays/$overlay, the image set by kustomize"
  # The recommended install carries the opt-in reports writer too.
  # The plain-certs install authenticates its callers: the node's API server presents the
  # client certificate hack/realnode/nodepki made for webhooks (README: Security); the cert-manager one
  # answers any caller, as a default install does.
  options=
  [ "$overlay" = cert-manager ] && options=with-reports
  [ "$overlay" = plain-certs ] && options="with-client-auth=/var/lib/policyattachment-node/pki/webhook-client-ca.crt"
  deploy_webhook "$overlay" "$IMAGE_NAME" "$IMAGE_TAG" $options
  step "running the e2e suite against the Deployment ($overlay)"
  run_suite
  previous=$overlay
done
step "passed"
