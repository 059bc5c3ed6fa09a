#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, offline, for `make e2e-node`: etcd and
# kube-apiserver (hack/control-plane/control-plane.sh), kube-controller-manager, kube-scheduler, kubelet and
# kube-proxy (hack/realnode/node-binaries.sh), Debian's containerd, runc and bridge CNI. Every process
# runs in a network namespace of its own, so nothing the node does (kube-proxy's iptables
# rules, ip_forward, the Pods' bridge) touches this machine's network:
#
#   host   pa-host 10.250.0.1/24  <-veth->  pa-node 10.250.0.2/24 (netns pa-node: the node IP)
#   Pods   10.244.0.0/24 on bridge cni0 inside the netns; Services 10.96.0.0/16
#
#   hack/realnode/realnode.sh up              start it (CONTROL_PLANE and NODE_BIN: folders of binaries)
#   hack/realnode/realnode.sh import FILE...  load image tarballs into the node's containerd
#   hack/realnode/realnode.sh down [--purge]  stop everything, put the machine back as it was
#
# Needs root (network namespaces, mounts, cgroups). kubectl: KUBECONFIG=$ROOT/pki/admin.kubeconfig.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"

ROOT="${REALNODE_ROOT:-/var/lib/policyattachment-node}"
RUN=/run/policyattachment-node
ETC=/etc/policyattachment-node
NS=pa-node
NODE_IP=10.250.0.2
NODE_NAME=pa-node
PKI="$ROOT/pki"
LOGS="$ROOT/logs"
PIDS="$ROOT/pids"
SOCK="$RUN/containerd/containerd.sock"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
t0=$(date +%s)
say() { echo "realnode: +$(( $(date +%s) - t0 ))s $*" >&2; }
ctr_() { ctr -a "$SOCK" -n k8s.io "$@"; }

# in_ns NAME CMD...: start CMD in the node's network namespace, in the background, once.
# nsenter, not `ip netns exec`, which remounts /sys and hides the cgroup mounts the kubelet needs.
in_ns() {
  local name="$1"; shift
  if [ -f "$PIDS/$name.pid" ] && kill -0 "$(cat "$PIDS/$name.pid")" 2>/dev/null; then return; fi
  nohup nsenter --net="/run/netns/$NS" "$@" >"$LOGS/$name.log" 2>&1 &
  echo $! >"$PIDS/$name.pid"
}

# write FILE: stdin into FILE only when it differs (kube-proxy exits when its config is rewritten).
write() {
  local tmp; tmp="$(mktemp)"; cat >"$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; chmod 644 "$1"; fi
}

# wait_until WHAT SECONDS CMD...
wait_until() {
  local what="$1" n="$2"; shift 2
  for _ in $(seq "$n"); do
    if "$@" >/dev/null 2>&1; then say "$what"; return 0; fi
    sleep 1
  done
  say "gave up waiting: $what (logs in $LOGS)"; return 1
}

network_up() {
  ip netns list | grep -qw "$NS" && return 0
  ip netns add "$NS"
  ip link add pa-host type veth peer name pa-node
  ip link set pa-node netns "$NS"
  ip addr add 10.250.0.1/24 dev pa-host
  ip link set pa-host up
  nsenter --net="/run/netns/$NS" sh -euc "
    ip link set lo up
    ip addr add $NODE_IP/24 dev pa-node
    ip link set pa-node up
    # no default route: only the Service range, which kube-proxy turns into Pod IPs
    ip route add 10.96.0.0/16 dev pa-node
    sysctl -qw net.ipv4.ip_forward=1
    sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true"
}

containerd_up() {
  mkdir -p "$ETC/cni" "$ROOT/cni"
  write "$ETC/containerd.toml" <<TOML
version = 2
root = "$ROOT/containerd"
state = "$RUN/containerd"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "policyattachment/pause:node"
  disable_apparmor = true
  # These machines withhold CAP_SYS_RESOURCE: runc cannot set the kubelet's oom_score_adj
  # on a sandbox ("can't get final child's PID from pipe"); this clamps it to containerd's.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$ETC/cni"
TOML
  write "$ETC/cni/10-pods.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$ROOT/cni"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
JSON
  in_ns containerd containerd --config "$ETC/containerd.toml"
  wait_until "containerd answers" 30 ctr_ version
  local pause="$ROOT/images/pause.tar"
  mkdir -p "$ROOT/images"
  if [ ! -f "$pause" ] || [ "$NODE_BIN/pause" -nt "$pause" ]; then
    (cd "$REPO" && go run ./hack/release/imagetar -binary "$NODE_BIN/pause" -at /pause -user 65535:65535 \
      -image policyattachment/pause:node -o "$pause")
  fi
  ctr_ images import "$pause" >/dev/null
}

control_plane_up() {
  (cd "$REPO" && go run ./hack/realnode/nodepki -dir "$PKI" -node-ip "$NODE_IP" -node "$NODE_NAME")
  in_ns etcd "$CONTROL_PLANE/etcd" --data-dir "$ROOT/etcd" --unsafe-no-fsync \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster default=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  in_ns kube-apiserver "$CONTROL_PLANE/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 --advertise-address=$NODE_IP --bind-address=$NODE_IP --secure-port=6443 \
    --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true \
    --client-ca-file="$PKI/ca.crt" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --enable-aggregator-routing=true --profiling=false --admission-control-config-file="$PKI/admission.yaml"
  wait_until "kube-apiserver ready" 120 kubectl get --raw /readyz
  in_ns kube-controller-manager "$NODE_BIN/kube-controller-manager" \
    --kubeconfig="$PKI/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$PKI/controller-manager.kubeconfig" --authorization-kubeconfig="$PKI/controller-manager.kubeconfig" \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --use-service-account-credentials=true --leader-elect=false --bind-address=127.0.0.1 \
    --cluster-cidr=10.244.0.0/16 --allocate-node-cidrs=true --node-cidr-mask-size=24 --service-cluster-ip-range=10.96.0.0/16
  in_ns kube-scheduler "$NODE_BIN/kube-scheduler" --kubeconfig="$PKI/scheduler.kubeconfig" \
    --authentication-kubeconfig="$PKI/scheduler.kubeconfig" --authorization-kubeconfig="$PKI/scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1
}

node_up() {
  # The kubelet sets these machine-wide (not per network namespace); `down` puts them back.
  [ -f "$ROOT/sysctl.saved" ] || sysctl -e vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops \
    kernel.keys.root_maxkeys kernel.keys.root_maxbytes | sed 's/ = /=/' >"$ROOT/sysctl.saved"
  printf 'nameserver 127.0.0.1\n' | write "$ETC/resolv.conf"
  write "$ETC/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: "$PKI/ca.crt"}}
authorization: {mode: Webhook}
tlsCertFile: "$PKI/kubelet-serving.crt"
tlsPrivateKeyFile: "$PKI/kubelet-serving.key"
resolvConf: $ETC/resolv.conf
clusterDomain: cluster.local
failSwapOn: false
maxPods: 60
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
# A Secret's new content reaches a mounted volume at the Pod's next sync: every 15 s here
# rather than the default minute, so the certificate renewal drill waits less.
syncFrequency: 15s
YAML
  in_ns kubelet "$NODE_BIN/kubelet" --config="$ETC/kubelet.yaml" --kubeconfig="$PKI/kubelet.kubeconfig" \
    --root-dir="$ROOT/kubelet" --node-ip=$NODE_IP --hostname-override=$NODE_NAME --v=1
  write "$ETC/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$PKI/kube-proxy.kubeconfig"}
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: 10.244.0.0/16
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
YAML
  in_ns kube-proxy "$NODE_BIN/kube-proxy" --config="$ETC/kube-proxy.yaml"
  wait_until "node $NODE_NAME Ready" 180 sh -c \
    "kubectl get node $NODE_NAME -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
}

up() {
  : "${CONTROL_PLANE:?folder with etcd and kube-apiserver (hack/control-plane/control-plane.sh)}"
  : "${NODE_BIN:?folder with the node binaries (hack/realnode/node-binaries.sh)}"
  mkdir -p "$ROOT" "$RUN" "$ETC" "$LOGS" "$PIDS"
  export KUBECONFIG="$PKI/admin.kubeconfig"
  network_up
  containerd_up
  control_plane_up
  node_up
  say "up: export KUBECONFIG=$KUBECONFIG"
}

import() {
  for f in "$@"; do ctr_ images import "$f" >/dev/null; say "imported $f"; done
}

# stop NAME: TERM, then KILL after 10 s.
stop() {
  local f="$PIDS/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  set +e
  for c in kube-proxy kubelet kube-scheduler kube-controller-manager; do stop "$c"; done
  # The Pods' containers outlive the kubelet: stop them while containerd still runs.
  if [ -S "$SOCK" ]; then
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
    sleep 1
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks rm -f "$t" >/dev/null 2>&1; done
    for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$c" >/dev/null 2>&1; done
  fi
  for c in containerd kube-apiserver etcd; do stop "$c"; done
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  # Mounts under our folders, deepest first; the Pods' network namespaces.
  for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($ROOT|$RUN)/" | sort -r); do umount -l "$m" 2>/dev/null; done
  for n in $(ls /run/netns 2>/dev/null | grep '^cni-'); do ip netns del "$n" 2>/dev/null; done
  # The kubelet's cgroups (cgroupfs driver: kubepods in each v1 hierarchy).
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  if [ -f "$ROOT/sysctl.saved" ]; then
    while IFS='=' read -r k v; do sysctl -qw "$k=$v" 2>/dev/null; done <"$ROOT/sysctl.saved"
    rm -f "$ROOT/sysctl.saved"
  fi
  ip link del pa-host 2>/dev/null
  ip netns del "$NS" 2>/dev/null
  [ "${1:-}" = "--purge" ] && rm -rf "$ROOT" "$RUN" "$ETC"
  say "down"
  return 0
}

case "${1:-}" in
up) up ;;
import) shift; import "$@" ;;
down) shift; down "$@" ;;
*) echo "usage: hack/realnode/realnode.sh up | import FILE... | down [--purge]" >&2; exit 2 ;;
esac
