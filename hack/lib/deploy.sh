# Sourced by hack/e2e-node.sh and hack/e2e-kind.sh: the steps both take once a cluster
# runs and holds the image, exactly as the README's install section tells users.
# Needs: step (a logging function), REPO (the checkout), KUBECONFIG, kubectl and go.

# install_crds: the Gateway API CRDs (the experimental channel, from the module this
# project builds against) and the test policy CRDs.
install_crds() {
  local gateway_api
  gateway_api="$(cd "$REPO" && go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)"
  kubectl apply --server-side -k "$gateway_api/config/crd/experimental" >/dev/null
  kubectl apply --server-side -f "$REPO/test/crds/" >/dev/null
}

# deploy_webhook OVERLAY IMAGE_NAME IMAGE_TAG: `kubectl apply -k` of an overlay whose only
# change to deploy/overlays/OVERLAY is the image (kustomize images:), then the rollout.
deploy_webhook() {
  local overlay="$1" name="$2" tag="$3" dir="$REPO/.local/deploy-$1"
  if [ "$overlay" = plain-certs ]; then
    (cd "$REPO" && go run ./certs)
  fi
  mkdir -p "$dir"
  cat >"$dir/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../deploy/overlays/$overlay
images:
- name: policyattachment/webhook
  newName: $name
  newTag: $tag
YAML
  kubectl apply -k "$dir"
  kubectl -n policyattachment-system rollout status deployment/policyattachment-webhook --timeout=180s
}

# run_suite: test/e2e against the deployed webhook, its Deployment drills included.
run_suite() {
  (cd "$REPO" && E2E_DEPLOYED=1 go test -tags e2e -count=1 ./test/e2e/ -v ${E2E_RUN:+-run "$E2E_RUN"})
}
