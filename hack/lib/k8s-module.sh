# Sourced by hack/control-plane/control-plane.sh, hack/realnode/node-binaries.sh and hack/kind/node-binaries.sh,
# after lib/versions.sh: prepares, in the current folder, a Go module that builds Kubernetes
# commands from k8s.io/kubernetes at $K8S_VERSION through the module proxy. Kubernetes' own
# go.mod replaces each staging module with ./staging/...; here each one is the published
# k8s.io/<module> at the matching v0.x.
# Usage: k8s_module NAME CMD...   (CMD: kube-apiserver, kubelet, ...)
k8s_module() {
  local name="$1"; shift
  [ -f go.mod ] && return 0
  "$GO" mod init "$name" >/dev/null 2>&1
  local gomod staging_version
  gomod="$("$GO" mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  staging_version="v0.${K8S_VERSION#1.}"
  "$GO" mod edit -require="k8s.io/kubernetes@v$K8S_VERSION"
  sed -n '/^replace (/,/^)/p' "$gomod" | awk '/=> \.\/staging/ {print $1}' | while read -r mod; do
    "$GO" mod edit -replace="$mod=$mod@$staging_version"
  done
  {
    echo "package main"
    echo
    echo "import ("
    for cmd in "$@"; do echo "	_ \"k8s.io/kubernetes/cmd/$cmd/app\""; done
    echo ")"
    echo
    echo "func main() {}"
  } > main.go
  "$GO" mod tidy >/dev/null 2>&1 || "$GO" mod tidy
}

# k8s_ldflags: the version the binaries report (without it, v0.0.0-master+$Format:%H$).
k8s_ldflags() {
  local minor="${K8S_VERSION#1.}" v=k8s.io/component-base/version
  minor="${minor%%.*}"
  echo "-X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
}
