package integration

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Two policies conflict only at a target that exists (an absent one is warned
// TargetNotFound), so tests of conflicts create their targets first, and wait until the
// webhook's informers have seen them.

// warnings records the warnings the API server relays (the webhook's among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) notFound() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.list {
		if strings.Contains(s, "TargetNotFound") || strings.Contains(s, "SectionNotFound") {
			return true
		}
	}
	return false
}

// createTargets creates the target objects (YAML documents), then waits until the webhook
// has seen each one the probe policy names: a dry run of probe (a policy of a resource
// gvr) is admitted with no TargetNotFound or SectionNotFound warning.
func createTargets(t *testing.T, cl client.Client, gvr schema.GroupVersionResource, probe string, docs ...string) {
	t.Helper()
	createDocs(t, cl, docs...)
	w := &warnings{}
	wcfg := rest.CopyConfig(cfg)
	wcfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(wcfg)
	require.NoError(t, err)
	obj := &unstructured.Unstructured{Object: object(t, probe).Object}
	var last error
	require.Eventually(t, func() bool {
		w.mu.Lock()
		w.list = nil
		w.mu.Unlock()
		_, last = dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last == nil && !w.notFound()
	}, 20*time.Second, 50*time.Millisecond, "the webhook never saw the targets of %s (last error %v, warnings %v)", obj.GetName(), last, w.list)
}

var (
	backendTLSPolicies = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "backendtlspolicies"}
	colorPolicies      = schema.GroupVersionResource{Group: "policies.controller.io", Version: "v1", Resource: "colorpolicies"}
	dnsPolicies        = schema.GroupVersionResource{Group: "kuadrant.io", Version: "v1", Resource: "dnspolicies"}
)

// serviceDoc is a Service with ports http (80) and https (443).
func serviceDoc(namespace, name string) string {
	return `
apiVersion: v1
kind: Service
metadata: {name: ` + name + `, namespace: ` + namespace + `}
spec: {ports: [{name: http, port: 80}, {name: https, port: 443}]}`
}

// createService creates serviceDoc and waits until the webhook has seen it.
func createService(t *testing.T, cl client.Client, namespace, name string) {
	t.Helper()
	createTargets(t, cl, backendTLSPolicies, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: probe, namespace: `+namespace+`}
spec:
  targetRefs: [{group: "", kind: Service, name: `+name+`, sectionName: https}]
  validation: {hostname: probe, wellKnownCACertificates: System}`, serviceDoc(namespace, name))
}

// createRoute creates an HTTPRoute with one rule and waits until the webhook has seen it.
func createRoute(t *testing.T, cl client.Client, namespace, name string) {
	t.Helper()
	createTargets(t, cl, colorPolicies, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: probe, namespace: `+namespace+`}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: `+name+`}]
  color: probe`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: `+name+`, namespace: `+namespace+`}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]`)
}

// createGateway creates a Gateway with listeners http and https and waits until the webhook
// has seen it.
func createGateway(t *testing.T, cl client.Client, namespace, name string) {
	t.Helper()
	createTargets(t, cl, dnsPolicies, `
apiVersion: kuadrant.io/v1
kind: DNSPolicy
metadata: {name: probe, namespace: `+namespace+`}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: `+name+`, sectionName: https}
  providerRefs: [{name: probe}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: `+name+`, namespace: `+namespace+`}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}]`)
}
