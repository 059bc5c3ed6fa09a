package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExplainReadsTheListenerSetsAConflictDependsOn: a route on a ListenerSet whose listener
// repeats an older ListenerSet's (same port, protocol and hostname) is on no path, and
// `explain --cluster` on the route, which reads the route's paths by name, says so as reading
// the whole cluster does: it lists the Gateway's other ListenerSets too.
func TestExplainReadsTheListenerSetsAConflictDependsOn(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "lsc-infra")
	createDocs(t, cl, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: lsc-infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: a-first, namespace: lsc-infra}
spec:
  parentRef: {name: gw}
  listeners: [{name: shop, protocol: HTTP, port: 8080, hostname: shop.example.com}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: b-second, namespace: lsc-infra}
spec:
  parentRef: {name: gw}
  listeners: [{name: shop, protocol: HTTP, port: 8080, hostname: shop.example.com}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-second, namespace: lsc-infra}
spec:
  parentRefs: [{name: b-second, kind: ListenerSet}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: on-second, namespace: lsc-infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: on-second}]
  defaults: {color: blue}`)
	run := webhookCLI(t)
	unrelated := filepath.Join(t.TempDir(), "unrelated.yaml")
	require.NoError(t, os.WriteFile(unrelated, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: unrelated}\n"), 0o600))

	code, narrow, errOut := run("explain", "--cluster", "httproute/on-second", "-n", "lsc-infra", "-v")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "Policies on the paths through HTTPRoute lsc-infra/on-second:\n  <none>\nPaths:\n  <none>\n", narrow)
	assert.Regexp(t, `read 1 listenersets.gateway.networking.k8s.io, of \d+ listed, on the target's paths\n`, errOut, "a-first, listed")
	code, whole, errWhole := run("explain", "--cluster", "-f", unrelated, "httproute/on-second", "-n", "lsc-infra")
	require.Equal(t, 0, code, errWhole)
	assert.Equal(t, whole, narrow, "reading the whole cluster tells the same")
}
