#!/usr/bin/env bash
# Builds Envoy Gateway's egctl from its Go module, once per machine and version, outside the
# checkout (like hack/control-plane/control-plane.sh), and prints the binary's path. `make oracle` runs its
# offline translator (`egctl x translate`) as the implementation's own judge of our verdicts.
#
# egctl's file loader keeps only each object's name and namespace, and has no case for
# ListenerSets. The oracle's scenarios need labels (targetSelectors, allowedRoutes namespace
# selectors), creationTimestamp (which policy is older wins a conflict) and ListenerSets, so
# the build runs on a copy of the module's source in the cache, its loader edited here: every
# object the loader builds also gets the document's labels and creationTimestamp, and
# ListenerSet documents are loaded into the translator's ListenerSets. Nothing of Envoy
# Gateway is kept in the repository; the edit is made on the module's own file at build time.
#
# EG_VERSION picks the module version (default: the one test/kindsdrift checks rows against).
# Cold, the build takes about 30 minutes on 2 cores; later runs print the cached path at once.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"
cd "$(dirname "$0")/../.."

GO=${GO:-go}
EG_VERSION=${EG_VERSION:-$(sed -n 's/.*Module: "github.com\/envoyproxy\/gateway", Version: "\(v[^"]*\)".*/\1/p' test/kindsdrift/source.go)}
CACHE=${POLICYATTACHMENT_CACHE:-$HOME/.cache/policyattachment}/egctl/$EG_VERSION-meta
BIN=$CACHE/egctl
if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
rm -rf "$CACHE/src" && mkdir -p "$CACHE"
echo "building egctl $EG_VERSION from its module into $CACHE (about 30 minutes cold)" >&2

dir=$($GO mod download -json "github.com/envoyproxy/gateway@$EG_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -f "$dir/go.mod" ] || { echo "egctl.sh: module github.com/envoyproxy/gateway@$EG_VERSION not found" >&2; exit 1; }
cp -r "$dir" "$CACHE/src" && chmod -R u+w "$CACHE/src"
load=$CACHE/src/internal/gatewayapi/resource/load.go

# The edit: inside the loader's per-document function (from its signature to the comment
# after the document loop), each ObjectMeta literal also takes the document's labels and
# creationTimestamp; a ListenerSet case is added before the ReferenceGrant case. The build
# fails loudly if a later version moves these lines.
cat > "$CACHE/edit.pl" <<'PERL'
my $meta = 'ObjectMeta: metav1.ObjectMeta{Labels: un.GetLabels(), CreationTimestamp: un.GetCreationTimestamp(),';
my $ls = "\t\tcase \"ListenerSet\":\n\t\t\tls := &gwapiv1.ListenerSet{TypeMeta: metav1.TypeMeta{Kind: \"ListenerSet\", APIVersion: gv}, "
  . $meta . " Name: name, Namespace: namespace}, Spec: spec.Interface().(gwapiv1.ListenerSetSpec)}\n"
  . "\t\t\tresources.ListenerSets = append(resources.ListenerSets, ls)\n";
my ($head, $body, $tail) = /\A(.*?)(func loadKubernetesYAMLToResources.*?)(\t\/\/ The namespace will not be treated.*)\z/s
  or die "egctl.sh: the loader's layout changed\n";
$body =~ s/ObjectMeta: metav1\.ObjectMeta\{/$meta/g or die "egctl.sh: no ObjectMeta literal in the loader\n";
$body =~ s/(\t\tcase KindReferenceGrant:)/$ls$1/ or die "egctl.sh: no ReferenceGrant case in the loader\n";
$_ = $head . $body . $tail;
PERL
EDIT=$CACHE/edit.pl perl -0n -e 'do $ENV{EDIT} or die($@ || "edit failed\n"); print' "$load" > "$CACHE/load.go"
mv "$CACHE/load.go" "$load"
grep -q 'case "ListenerSet"' "$load" || { echo "egctl.sh: no ListenerSet case added: loader layout changed" >&2; exit 1; }
cd "$CACHE/src"
$GO build -o "$BIN.tmp" ./cmd/egctl
mv "$BIN.tmp" "$BIN"
echo "$BIN"
