package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

func newClient(t *testing.T) (client.Client, *testkit.Warnings) {
	t.Helper()
	return testkit.NewClient(t, cfg)
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

func namespace(t *testing.T, cl client.Client, name string) {
	t.Helper()
	require.NoError(t, cl.Create(context.Background(), object(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}")))
}

// createDocs creates the objects written as YAML documents, in order.
func createDocs(t *testing.T, cl client.Client, docs ...string) {
	t.Helper()
	for _, doc := range docs {
		require.NoError(t, cl.Create(context.Background(), object(t, doc)), doc)
	}
}

// denial returns the text kubectl prints after "Error from server ...: ".
func denial(err error) string {
	if err == nil {
		return "<allowed>"
	}
	return err.Error()
}

func TestDenialsReachTheClient(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "denials")
	err := cl.Create(context.Background(), object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: bad-kind, namespace: denials}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  color: red`))
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ColorPolicy.policies.controller.io "bad-kind" is invalid: spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`, denial(err))

	err = cl.Create(context.Background(), object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: two-ways, namespace: denials}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  defaults: {color: red}
  overrides: {color: blue}`))
	assert.Equal(t, "admission webhook \"validate.policyattachment.io\" denied the request: ColorPolicy.policies.controller.io \"two-ways\" is invalid: [spec.targetRefs[0].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace \"infra\" lets ColorPolicy from namespace \"denials\" reference Gateway \"gw\", spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with `defaults`; a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`]", denial(err))
}

func TestWarningsReachTheClient(t *testing.T) {
	cl, w := newClient(t)
	namespace(t, cl, "warnings")
	require.NoError(t, cl.Create(context.Background(), object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: early, namespace: warnings}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: not-yet}]
  color: red`)))
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[0]: HTTPRoute warnings/not-yet not found; the policy takes effect once it exists"}, w.Take())
}

// TestSequentialApply is `kubectl apply -f` of a file with two conflicting policies: the
// first is stored before the second is reviewed, and the second is rejected every time.
func TestSequentialApply(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "sequential")
	createService(t, cl, "sequential", "b1")
	ctx := context.Background()
	policy := func(name string) *unstructured.Unstructured {
		return object(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: sequential}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.sequential.svc, wellKnownCACertificates: System}`, name))
	}
	rejected := 0
	const runs = 100
	for i := 0; i < runs; i++ {
		first, second := policy(fmt.Sprintf("first-%d", i)), policy(fmt.Sprintf("second-%d", i))
		require.NoError(t, cl.Create(ctx, first), "run %d (%s)", i, liveReadCounters(t))
		err := cl.Create(ctx, second)
		want := fmt.Sprintf(`admission webhook "validate.policyattachment.io" denied the request: BackendTLSPolicy.gateway.networking.k8s.io "second-%d" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service sequential/b1 section https already has BackendTLSPolicy sequential/first-%d; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, i, i)
		if denial(err) == want {
			rejected++
		} else if err == nil {
			require.NoError(t, cl.Delete(ctx, second))
		} else {
			t.Errorf("run %d: %v (%s)", i, err, liveReadCounters(t))
		}
		require.NoError(t, cl.Delete(ctx, first))
	}
	assert.Equal(t, runs, rejected)
}

func TestEndpoints(t *testing.T) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}}
	for path, want := range map[string]string{admission.PathHealthz: "ok", admission.PathReadyz: "ok"} {
		resp, err := c.Get(baseURL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, want, string(body), path)
		assert.Equal(t, "HTTP/1.1", resp.Proto, "HTTP/2 is off by default")
	}
	// The review port serves no metrics: they have a port of their own, behind the API
	// server's authentication (TestMetricsNeedATokenThatMayReadThem).
	resp, err := c.Get(baseURL + admission.PathMetrics)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, string(body), "policyattachment_")

	metrics, err := cluster.ScrapeMetrics()
	require.NoError(t, err)
	// The reviewed namespace is left out (no --metrics-namespace-label): metrics carry no names.
	assert.Regexp(t, `policyattachment_reviews_total\{dry_run="false",group="policies.controller.io",kind="ColorPolicy",namespace="",operation="CREATE",reason="InvalidTargetRef",verdict="denied",webhook="validate"\} [1-9]`, metrics)
	assert.NotRegexp(t, `policyattachment_reviews_total\{[^}]*namespace="[^"]`, metrics)
	assert.Contains(t, metrics, "policyattachment_review_duration_seconds_bucket")
	// The first periodic audit runs once the caches have synced.
	assert.Regexp(t, `(?m)^policyattachment_audit_last_run_timestamp_seconds [1-9]`, metrics)
	assert.Regexp(t, `(?m)^policyattachment_audit_policies \d+`, metrics)

	// The probes' port of their own: plain HTTP, what the Deployment's probes reach.
	for url, want := range map[string]string{cluster.ProbeURL + admission.PathHealthz: "ok", cluster.ProbeURL + admission.PathReadyz: "ok"} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, url)
		assert.Equal(t, want, string(body), url)
	}
}

// TestImpactAnnotationLands checks the mutating webhook's annotations on the stored object.
func TestImpactAnnotationLands(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "impact")
	ctx := context.Background()
	for _, doc := range []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: impact}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: impact}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`} {
		require.NoError(t, cl.Create(ctx, object(t, doc)))
	}
	// The informers see the Gateway and the route before the policy is reviewed.
	require.Eventually(t, func() bool {
		p := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: probe, namespace: impact}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`)
		if err := cl.Create(ctx, p, client.DryRunAll); err != nil {
			return false
		}
		return strings.Contains(p.GetAnnotations()["policyattachment.io/impact-summary"], "enforced on 1 of 1 path")
	}, 10*time.Second, 50*time.Millisecond)

	policy := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-red, namespace: impact}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`)
	require.NoError(t, cl.Create(ctx, policy))
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(policy.GroupVersionKind())
	require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(policy), stored))
	assert.Equal(t, "Atomic defaults on Gateway impact/gw: enforced on 1 of 1 path (predicted at admission)", stored.GetAnnotations()["policyattachment.io/impact-summary"])
	var im impact.Impact
	require.NoError(t, json.Unmarshal([]byte(stored.GetAnnotations()["policyattachment.io/impact"]), &im))
	// No observedAt: the prediction rests on no stored policy. Its one ancestor, in GEP-5058's
	// shape, is the Gateway it targets.
	gw := impact.ObjectRef{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "impact", Name: "gw"}
	assert.Equal(t, impact.Impact{Status: impact.StatusEnforced, Contexts: 1, Enforced: 1, Overrides: []string{}, OverriddenBy: []string{},
		Ancestors: []impact.AncestorStatus{{AncestorRef: gw, Accepted: "Accepted", Status: impact.StatusEnforced, Contexts: 1,
			Targets: []impact.TargetStatus{{TargetRef: gw, Accepted: "Accepted", Status: impact.StatusEnforced, Contexts: 1}}}}}, im)
}

// TestDeletionWarnsWhatItAffects deletes a ReferenceGrant an accepted policy relies on,
// then the policy: both deletions are allowed, each with its warning.
func TestDeletionWarnsWhatItAffects(t *testing.T) {
	cl, w := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "del-infra")
	namespace(t, cl, "del-app")
	grant := object(t, `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: colors, namespace: del-infra}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: del-app}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`)
	require.NoError(t, cl.Create(ctx, grant))
	policy := object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: shared, namespace: del-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: del-infra}]
  overrides: {color: red}`)
	require.Eventually(t, func() bool { return cl.Create(ctx, policy.DeepCopy()) == nil }, 10*time.Second, 50*time.Millisecond,
		"admitted once the informer has seen the grant")
	require.Eventually(t, func() bool {
		return cl.Delete(ctx, grant.DeepCopy(), client.DryRunAll) == nil && len(w.Take()) == 1
	}, 10*time.Second, 50*time.Millisecond, "the informer has seen the policy")
	require.NoError(t, cl.Delete(ctx, grant))
	assert.Equal(t, []string{"DeleteImpact: deleting ReferenceGrant del-infra/colors withdraws the cross-namespace reference 1 accepted policy relies on: a ColorPolicy in namespace \"del-app\"; controllers may stop enforcing it and the next update of it will be denied"}, w.Take())

	require.NoError(t, cl.Delete(ctx, policy))
	assert.Equal(t, []string{"DeleteImpact: deleting ColorPolicy del-app/shared removes atomic overrides that reach no paths"}, w.Take())
}

// TestPolicyCRDInstalledWhileRunning installs a CRD labelled as a Direct policy kind after
// the webhook started: it gets a row and an informer, and its same-target conflicts are
// denied: a second policy setting a setting to another value, not a second policy alone (a
// kind known only from its label is judged by value). (The webhook configuration names the
// new resource, as an operator would add it.)
func TestPolicyCRDInstalledWhileRunning(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "discovered")
	createService(t, cl, "discovered", "api")
	installPolicyCRD(t, cl, "RetryPolicy", "retrypolicies", "Namespaced", "Direct")

	retry := func(name string, retries int) *unstructured.Unstructured {
		return object(t, fmt.Sprintf(`
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: %s, namespace: discovered}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  retries: %d`, name, retries))
	}
	require.Eventually(t, func() bool { return cl.Create(ctx, retry("first", 3)) == nil }, 20*time.Second, 100*time.Millisecond)
	var err error
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err = cl.Create(ctx, retry("second", 5), client.DryRunAll)
		assert.ErrorContains(c, err, "Conflicted")
	}, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: RetryPolicy.example.com "second" is invalid: spec.retries: Forbidden: Conflicted: RetryPolicy discovered/first on Service discovered/api also sets defaults "retries" to 3 (this policy: 5); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`, err.Error())
	assert.NoError(t, cl.Create(ctx, retry("same", 3), client.DryRunAll), "the same value is no conflict")
}

// TestClusterScopedPolicyKindIsReviewed: the shipped webhook rules cover both scopes, so a
// cluster-scoped policy kind (added to the configuration's resources) is judged at the API
// server as `webhook check` judges it.
func TestClusterScopedPolicyKindIsReviewed(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	installPolicyCRD(t, cl, "ClusterGuard", "clusterguards", "Cluster", "Inherited")

	guard := object(t, `
apiVersion: example.com/v1
kind: ClusterGuard
metadata: {name: bad-target}
spec:
  targetRefs: [{group: "", kind: ConfigMap, name: settings}]
  defaults: {mode: strict}`)
	var err error
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err = cl.Create(ctx, guard.DeepCopy(), client.DryRunAll)
		assert.ErrorContains(c, err, "InvalidTargetRef")
	}, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ClusterGuard.example.com "bad-target" is invalid: spec.targetRefs[0].kind: Unsupported value: "ConfigMap": InvalidTargetRef: supported values: "gateway.networking.k8s.io/GatewayClass", "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/ListenerSet", "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute", "gateway.networking.k8s.io/TLSRoute", "gateway.networking.k8s.io/TCPRoute", "gateway.networking.k8s.io/UDPRoute", "Service"`, err.Error())
}

// installPolicyCRD installs a CRD of group example.com labelled as a policy kind (label
// value class) whose spec takes anything, and adds its resource to the validating webhook,
// as an operator would.
func installPolicyCRD(t *testing.T, cl client.Client, kind, plural, scope, class string) {
	t.Helper()
	require.NoError(t, cl.Create(context.Background(), object(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.example.com
  labels: {gateway.networking.k8s.io/policy: %[4]s}
spec:
  group: example.com
  scope: %[3]s
  names: {kind: %[1]s, listKind: %[1]sList, plural: %[2]s, singular: %[5]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}`, kind, plural, scope, class, strings.ToLower(kind)))))
	addResourceToWebhook(t, cl, "example.com", plural)
}

// addResourceToWebhook adds a resource to the validating webhook's first rule.
func addResourceToWebhook(t *testing.T, cl client.Client, group, resource string) {
	t.Helper()
	ctx := context.Background()
	cfgObj := &unstructured.Unstructured{}
	cfgObj.SetAPIVersion("admissionregistration.k8s.io/v1")
	cfgObj.SetKind("ValidatingWebhookConfiguration")
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "policyattachment"}, cfgObj))
	hooks, _, _ := unstructured.NestedSlice(cfgObj.Object, "webhooks")
	hook := hooks[0].(map[string]any)
	ruleList := hook["rules"].([]any)
	rule := ruleList[0].(map[string]any)
	rule["apiGroups"] = append(rule["apiGroups"].([]any), group)
	rule["resources"] = append(rule["resources"].([]any), resource)
	require.NoError(t, unstructured.SetNestedSlice(cfgObj.Object, hooks, "webhooks"))
	require.NoError(t, cl.Update(ctx, cfgObj))
}

// TestUpdate judges an UPDATE against everyone but the object's own stored version.
func TestUpdate(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "updates")
	createRoute(t, cl, "updates", "r1")
	mk := func(name, color string) *unstructured.Unstructured {
		return object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: `+name+`, namespace: updates}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  color: `+color)
	}
	a := mk("a", "red")
	require.NoError(t, cl.Create(ctx, a))
	b := mk("b", "red") // the same value at one level: no conflict
	require.NoError(t, cl.Create(ctx, b))

	a.Object["spec"].(map[string]any)["color"] = "red" // unchanged: never conflicts with itself
	require.NoError(t, cl.Update(ctx, a))
	b.Object["spec"].(map[string]any)["color"] = "blue"
	err := cl.Update(ctx, b)
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ColorPolicy.policies.controller.io "b" is invalid: spec: Forbidden: Conflicted: ColorPolicy updates/a on HTTPRoute updates/r1 also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`, denial(err))
}

// servingSerial returns the serial number of the certificate the webhook serves now.
func servingSerial(t *testing.T) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(baseURL, "https://"), tlsConf)
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestCertRotation replaces the serving certificate three times during a steady stream of
// reviews through the API server: no request fails, and the new certificate is served.
func TestCertRotation(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "rotation")
	before := servingSerial(t)

	stop := make(chan struct{})
	var failures, sent int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := object(t, fmt.Sprintf(`
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: steady-%d, namespace: rotation}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}`, i))
			sent++
			if err := cl.Create(ctx, p, client.DryRunAll); err != nil {
				failures++
				t.Logf("request %d failed: %v", i, err)
			}
		}
	}()
	for r := 0; r < 3; r++ {
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, rotateServingCert())
	}
	require.Eventually(t, func() bool { return servingSerial(t) != before }, 20*time.Second, 100*time.Millisecond,
		"the rotated certificate is served")
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	assert.Zero(t, failures, "of %d requests", sent)
	assert.Greater(t, sent, 10)
}

// TestSecondReplicaReadsLive judges with a second replica whose cache has never seen the
// first policy (it has no informers at all): its live read of the API server still finds
// the first policy, so the conflicting second one is denied.
func TestSecondReplicaReadsLive(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "replicas")
	createService(t, cl, "replicas", "b1")
	first := object(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: first, namespace: replicas}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.replicas.svc, wellKnownCACertificates: System}`)
	require.NoError(t, cl.Create(ctx, first))

	reader, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	// A replica whose informers have synced (they saw the Service) but not yet seen "first".
	snap := index.New()
	_, err = snap.AddResource(schema.GroupKind{Kind: "Service"}, object(t, serviceDoc("replicas", "b1")).Object)
	require.NoError(t, err)
	store := clusterstate.NewStore(kinds.BuiltinKindTable(), snap)
	store.SetReady()
	replica := &admission.Validator{Store: store, Live: reader}
	second := first.DeepCopy()
	second.SetName("second")
	second.SetResourceVersion("")
	resp := reviewCreate(t, replica, second)
	require.False(t, resp.Allowed)
	assert.Equal(t, `BackendTLSPolicy.gateway.networking.k8s.io "second" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service replicas/b1 section https already has BackendTLSPolicy replicas/first; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, resp.Result.Message)
}

// reviewCreate hands a CREATE review of obj straight to a validator, as the API server would.
func reviewCreate(t *testing.T, v *admission.Validator, obj *unstructured.Unstructured) ctrladmission.Response {
	t.Helper()
	raw, err := json.Marshal(obj.Object)
	require.NoError(t, err)
	gvk := obj.GroupVersionKind()
	return v.Handle(context.Background(), ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Create, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Kind:   metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Object: runtime.RawExtension{Raw: raw},
	}})
}

// TestLiveReadDropsDeletedPolicy: a replica's cache still holds a policy the API server no
// longer has (its watch is behind). The conflict it would cause is verified live, the
// policy is dropped, and the review is admitted. When the live read fails, the review is
// judged on the cache: the denial stands, and the failure is counted.
func TestLiveReadDropsDeletedPolicy(t *testing.T) {
	ghost := object(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: ghost, namespace: gone, uid: 6f1c0e4e-0000-4000-8000-000000000001}
spec:
  targetRefs: [{group: "", kind: Service, name: b1, sectionName: https}]
  validation: {hostname: b1.gone.svc, wellKnownCACertificates: System}`)
	newcomer := ghost.DeepCopy()
	newcomer.SetName("newcomer")
	newcomer.SetUID("")
	replica := func(live client.Reader) *admission.Validator {
		store := clusterstate.NewStore(kinds.BuiltinKindTable(), index.New())
		store.Upsert(schema.GroupKind{Kind: "Service"}, object(t, serviceDoc("gone", "b1")).Object)
		store.Upsert(ghost.GroupVersionKind().GroupKind(), ghost.DeepCopy().Object)
		store.SetReady()
		return &admission.Validator{Store: store, Live: live}
	}
	reader, err := client.New(cfg, client.Options{})
	require.NoError(t, err)

	t.Run("deleted policy dropped", func(t *testing.T) {
		dropped, failed := counter(t, "policyattachment_live_read_dropped_total"), counter(t, "policyattachment_live_read_errors_total")
		resp := reviewCreate(t, replica(reader), newcomer)
		assert.True(t, resp.Allowed, "%+v", resp.Result)
		assert.Equal(t, dropped+1, counter(t, "policyattachment_live_read_dropped_total"))
		assert.Equal(t, failed, counter(t, "policyattachment_live_read_errors_total"))
	})
	t.Run("live read fails", func(t *testing.T) {
		// A real client whose API server is not there: every read fails at once.
		down := rest.CopyConfig(cfg)
		down.Host = "https://127.0.0.1:1"
		unreachable, err := client.New(down, client.Options{Mapper: reader.RESTMapper()})
		require.NoError(t, err)
		dropped, failed := counter(t, "policyattachment_live_read_dropped_total"), counter(t, "policyattachment_live_read_errors_total")
		resp := reviewCreate(t, replica(unreachable), newcomer)
		require.False(t, resp.Allowed)
		assert.Equal(t, `BackendTLSPolicy.gateway.networking.k8s.io "newcomer" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service gone/b1 section https already has BackendTLSPolicy gone/ghost; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`, resp.Result.Message)
		assert.Equal(t, dropped, counter(t, "policyattachment_live_read_dropped_total"))
		assert.Equal(t, failed+1, counter(t, "policyattachment_live_read_errors_total"))
	})
}

// TestConcurrentPair sends two conflicting policies at once through the API server, 20
// times: exactly one of each pair is admitted.
func TestConcurrentPair(t *testing.T) {
	cl, _ := newClient(t)
	ctx := context.Background()
	namespace(t, cl, "concurrent")
	for run := 0; run < 20; run++ {
		createGateway(t, cl, "concurrent", fmt.Sprintf("gw-%d", run))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = cl.Create(ctx, object(t, fmt.Sprintf(`
apiVersion: kuadrant.io/v1
kind: DNSPolicy
metadata: {name: dns-%d-%d, namespace: concurrent}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw-%d, sectionName: https}
  providerRefs: [{name: route53}]`, run, i, run)))
			}()
		}
		wg.Wait()
		admitted := 0
		for i, err := range errs {
			if err == nil {
				admitted++
				continue
			}
			assert.Equal(t, fmt.Sprintf(`admission webhook "validate.policyattachment.io" denied the request: DNSPolicy.kuadrant.io "dns-%d-%d" is invalid: spec.targetRef: Forbidden: Conflicted: Gateway concurrent/gw-%d section https already has DNSPolicy concurrent/dns-%d-%d; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`,
				run, i, run, run, 1-i), err.Error(), "the loser names the winner")
		}
		require.Equal(t, 1, admitted, "run %d: %v", run, errs)
	}
}

// TestBuiltinKindsThroughTheAPIServer sends one bad policy of several built-in kinds.
func TestBuiltinKindsThroughTheAPIServer(t *testing.T) {
	cl, _ := newClient(t)
	namespace(t, cl, "kinds")
	cases := map[string]string{
		`
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: both, namespace: kinds}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}
  limits: {a: {rates: [{limit: 1, window: 1s}]}}
  overrides: {strategy: merge, limits: {b: {rates: [{limit: 2, window: 1s}]}}}`: "admission webhook \"validate.policyattachment.io\" denied the request: RateLimitPolicy.kuadrant.io \"both\" is invalid: spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with bare rules (`limits`); a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`",
		`
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: basic, namespace: kinds}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  basicAuth: {users: {name: htpasswd, namespace: secrets}}`: `admission webhook "validate.policyattachment.io" denied the request: SecurityPolicy.gateway.envoyproxy.io "basic" is invalid: spec.basicAuth.users.namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "secrets" lets SecurityPolicy from namespace "kinds" reference Secret "htpasswd"`,
		`
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: trace, namespace: kinds}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]`: `admission webhook "validate.policyattachment.io" denied the request: ObservabilityPolicy.gateway.nginx.org "trace" is invalid: spec.targetRefs[0].kind: Unsupported value: "gateway.networking.k8s.io/Gateway": InvalidTargetRef: supported values: "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute"`,
	}
	for doc, want := range cases {
		assert.Equal(t, want, denial(cl.Create(context.Background(), object(t, doc))))
	}
}
