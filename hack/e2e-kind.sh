#!/usr/bin/env bash
# make e2e-kind: the same e2e suite (test/e2e) against a real kind cluster with the webhook
# deployed from deploy/. Needs Docker, kind, kubectl and Go. It cannot run on our CI
# machines (no Docker engine); run it on a workstation.
#
#   CERT_MANAGER=1 hack/e2e-kind.sh   # the cert-manager overlay (installs cert-manager)
#   hack/e2e-kind.sh                  # the plain-certs overlay (certificates from `go run ./certs`)
#   KEEP_CLUSTER=1 hack/e2e-kind.sh   # leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER="${CLUSTER:-policyattachment-e2e}"
IMAGE="${IMAGE:-policyattachment/webhook:e2e}"
CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
KUBECONFIG_FILE="$(mktemp)"
export KUBECONFIG="$KUBECONFIG_FILE"

step() { printf '\n== %s\n' "$*"; }
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

step "building and loading $IMAGE"
docker build -t "$IMAGE" .
kind load docker-image "$IMAGE" --name "$CLUSTER"

step "installing the Gateway API CRDs and the test policy CRDs"
gateway_api="$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)"
kubectl apply --server-side -k "$gateway_api/config/crd/experimental"
kubectl apply --server-side -f test/crds/

overlay=plain-certs
if [ -n "${CERT_MANAGER:-}" ]; then
  overlay=cert-manager
  step "installing cert-manager $CERT_MANAGER_VERSION"
  kubectl apply -f "https://github.com/cert-manager/cert-manager/releases/download/$CERT_MANAGER_VERSION/cert-manager.yaml"
  kubectl -n cert-manager wait --for=condition=Available deployment --all --timeout=300s
else
  step "making certificates for the plain-certs overlay"
  go run ./certs
fi

step "deploying the webhook ($overlay overlay)"
rendered="$(mktemp)"
kubectl kustomize "deploy/overlays/$overlay" | sed "s#image: policyattachment/webhook:latest#image: $IMAGE#" > "$rendered"
kubectl apply -f "$rendered"
kubectl -n policyattachment-system rollout status deployment/policyattachment-webhook --timeout=300s

step "running the e2e suite"
go test -tags e2e -count=1 ./test/e2e/ -v
