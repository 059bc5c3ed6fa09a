# Sourced by hack/realnode/e2e.sh and hack/kind/e2e.sh: the steps both take once a cluster
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

# deploy_webhook OVERLAY IMAGE_NAME IMAGE_TAG [with-reports] [with-client-auth=CA_FILE]:
# `kubectl apply -k` of an overlay whose only change to deploy/overlays/OVERLAY is the image
# (kustomize images:), then the rollout. with-reports adds deploy/components/reports, after
# the OpenReports CRD its module ships, as the README's Reports section says;
# with-client-auth adds deploy/components/apiserver-client-auth, after the ConfigMap of the
# CA that signs the API server's client certificate, as README's Security section says.
deploy_webhook() {
  local overlay="$1" name="$2" tag="$3" dir="$REPO/.local/deploy-$1" components="" reports="" option
  shift 3
  if [ "$overlay" = plain-certs ]; then
    (cd "$REPO" && go run ./certs)
  fi
  for option in "$@"; do
    case "$option" in
    with-reports)
      reports=1
      local openreports
      openreports="$(cd "$REPO" && go list -m -f '{{.Dir}}' github.com/openreports/reports-api)"
      kubectl apply --server-side -f "$openreports/config/crd/openreports.io_reports.yaml" >/dev/null
      components+=$'\n- ../../deploy/components/reports';;
    with-client-auth=*)
      kubectl create namespace policyattachment-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
      kubectl -n policyattachment-system create configmap policyattachment-apiserver-client-ca \
        --from-file=ca.crt="${option#with-client-auth=}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
      components+=$'\n- ../../deploy/components/apiserver-client-auth';;
    esac
  done
  [ -n "$components" ] && components="components:$components"
  mkdir -p "$dir"
  cat >"$dir/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../deploy/overlays/$overlay
$components
images:
- name: policyattachment/webhook
  newName: $name
  newTag: $tag
YAML
  kubectl apply -k "$dir"
  kubectl -n policyattachment-system rollout status deployment/policyattachment-webhook --timeout=180s
  if [ -n "$reports" ]; then
    kubectl -n policyattachment-system rollout status deployment/policyattachment-reports --timeout=180s
  fi
  wait_for_ca_bundles
}

# undeploy_webhook OVERLAY: the README's uninstall: the webhook configurations first, so the
# API server never calls a webhook that is gone, then the rest, waiting until it is gone.
undeploy_webhook() {
  kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration policyattachment --ignore-not-found
  kubectl delete -k "$REPO/.local/deploy-$1" --ignore-not-found --wait --timeout=180s
}

# deploy_chart IMAGE_NAME IMAGE_TAG: the README's `helm install` of deploy/chart (cert-manager
# certificates, the reports writer on) into a namespace Helm creates unlabelled, then what
# deploy_webhook waits for.
deploy_chart() {
  local helm
  helm="$(cd "$REPO" && bash hack/release/helm.sh)"
  local openreports
  openreports="$(cd "$REPO" && go list -m -f '{{.Dir}}' github.com/openreports/reports-api)"
  kubectl apply --server-side -f "$openreports/config/crd/openreports.io_reports.yaml" >/dev/null
  "$helm" install policyattachment "$REPO/deploy/chart" -n policyattachment-system --create-namespace \
    --set image.repository="$1" --set image.tag="$2" --set reports.enabled=true --wait --timeout 180s
  wait_for_ca_bundles
}

# undeploy_chart: `helm uninstall`, whose pre-delete hook (a Job running `webhook uninstall`
# with the hook's own RBAC) removes the webhook configurations before anything else goes;
# then checks that it ran to completion and that nothing of the release is left.
undeploy_chart() {
  local helm
  helm="$(cd "$REPO" && bash hack/release/helm.sh)"
  "$helm" uninstall policyattachment -n policyattachment-system --wait --timeout 180s
  local completed
  completed="$(kubectl -n policyattachment-system get events -o jsonpath='{range .items[?(@.involvedObject.kind=="Job")]}{.involvedObject.name} {.reason}{"\n"}{end}')"
  if ! grep -qx 'policyattachment-uninstall Completed' <<<"$completed"; then
    echo "the pre-delete hook's Job did not complete; its events:" >&2
    echo "$completed" >&2
    return 1
  fi
  local left
  left="$(kubectl get validatingwebhookconfiguration,mutatingwebhookconfiguration,clusterrole,clusterrolebinding -o name | grep policyattachment || true)
$(kubectl -n policyattachment-system get deployment,service,serviceaccount,job,configmap,certificate -o name | grep policyattachment || true)"
  if [ -n "$(tr -d '[:space:]' <<<"$left")" ]; then
    echo "helm uninstall left these behind:" >&2
    echo "$left" >&2
    return 1
  fi
  echo "helm uninstall: the hook's Job completed, the release left nothing behind"
}

# wait_for_ca_bundles: with cert-manager, cainjector fills the caBundles a moment after the
# configurations exist; until then the API server cannot call the webhook, and validation
# fails closed.
wait_for_ca_bundles() {
  local kind
  for kind in validatingwebhookconfiguration mutatingwebhookconfiguration; do
    wait_for "the caBundle of $kind policyattachment" 120 \
      sh -c "[ -n \"\$(kubectl get $kind policyattachment -o jsonpath='{.webhooks[0].clientConfig.caBundle}')\" ]"
  done
}

# install_cert_manager MANIFEST: cert-manager's static manifest (a file or a URL), applied as
# its documentation says, then what `cmctl check api` checks: its webhook answers, so the
# overlay's Issuers and Certificates are accepted.
install_cert_manager() {
  kubectl apply -f "$1" >/dev/null
  kubectl -n cert-manager wait --for=condition=Available deployment --all --timeout=300s
  wait_for "cert-manager's webhook admits an Issuer (dry run)" 120 sh -c 'kubectl apply --dry-run=server -f - <<YAML
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: check-api, namespace: default}
spec: {selfSigned: {}}
YAML'
}

# wait_for WHAT SECONDS CMD...: CMD until it succeeds, at most SECONDS times a second apart.
wait_for() {
  local what="$1" n="$2" i; shift 2
  for ((i = 0; i < n; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "gave up waiting for $what; last attempt:" >&2
  "$@" >&2 || true
  return 1
}

# run_suite [PATTERN]: test/e2e against the deployed webhook, its Deployment drills included;
# only the tests matching PATTERN (else $E2E_RUN) when given.
run_suite() {
  local pattern="${1:-${E2E_RUN:-}}"
  (cd "$REPO" && E2E_DEPLOYED=1 go test -tags e2e -count=1 ./test/e2e/ -v ${pattern:+-run "$pattern"})
}
