# Sourced by the scripts that build Kubernetes and etcd from source (hack/control-plane/control-plane.sh,
# hack/realnode/node-binaries.sh, hack/kind/node-binaries.sh, hack/kind/node-image.sh): the versions
# they build, so that they agree and a bump is one edit here, and where they cache what they
# build. The environment overrides each. Elsewhere: hack/kind/cluster.yaml names etcd's tag,
# hack/cert-manager/cert-manager.sh the Kubernetes version, hack/kind/node-image/main.go both as defaults.
K8S_VERSION="${K8S_VERSION:-1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
CACHE="${POLICYATTACHMENT_CACHE:-${HOME:-/tmp}/.cache/policyattachment}"
GO="${GO:-go}"
