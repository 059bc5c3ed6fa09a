package integration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/admission"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// targetDeletionWorld is a Gateway in infraNS with a default of its own, and a route in
// appNS attached to it alone, with a policy of its own.
func targetDeletionWorld(infraNS, appNS string) []string {
	return []string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ` + infraNS + `}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: ` + appNS + `}
spec:
  parentRefs: [{name: gw, namespace: ` + infraNS + `}]
  rules: [{backendRefs: [{name: store, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-defaults, namespace: ` + infraNS + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: red}`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: store-blue, namespace: ` + appNS + `}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  color: blue`}
}

func gatewayObject(namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("gateway.networking.k8s.io/v1")
	u.SetKind("Gateway")
	u.SetNamespace(namespace)
	u.SetName("gw")
	return u
}

// gatewayDeletionWarnings are the warnings of deleting that Gateway, as its namespace reads
// them: its own policy named, the route's by kind and namespace.
func gatewayDeletionWarnings(infraNS, appNS string) []string {
	return []string{
		`DeleteImpact: deleting Gateway ` + infraNS + `/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy ` + infraNS + `/gw-defaults`,
		`DeleteImpact: deleting Gateway ` + infraNS + `/gw leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "` + appNS + `"`,
	}
}

// waitForGatewayWarnings dry-runs the Gateway's deletion until the webhook has seen the
// world around it: its warnings are want.
func waitForGatewayWarnings(t *testing.T, cl client.Client, w *testkit.Warnings, namespace string, want []string) {
	t.Helper()
	var got []string
	require.Eventually(t, func() bool {
		w.Take()
		err := cl.Delete(context.Background(), gatewayObject(namespace), client.DryRunAll)
		got = w.Take()
		return err == nil && assert.ObjectsAreEqual(want, got)
	}, 20*time.Second, 100*time.Millisecond, "the dry run never warned as expected; last warnings %q", got)
}

// TestTargetDeletionWarnsThroughTheAPIServer: `kubectl delete` of a Gateway whose policies
// lose their target goes through, with the webhook's warnings, worded for the Gateway's
// namespace (the route's policy is another tenant's).
func TestTargetDeletionWarnsThroughTheAPIServer(t *testing.T) {
	cl, w := newClient(t)
	namespace(t, cl, "tdel-infra")
	namespace(t, cl, "tdel-app")
	createDocs(t, cl, targetDeletionWorld("tdel-infra", "tdel-app")...)
	want := gatewayDeletionWarnings("tdel-infra", "tdel-app")
	waitForGatewayWarnings(t, cl, w, "tdel-infra", want)

	require.NoError(t, cl.Delete(context.Background(), gatewayObject("tdel-infra")))
	assert.Equal(t, want, w.Take())
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: "tdel-infra", Name: "gw"}, gatewayObject("tdel-infra"))
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
}

// TestTargetDeletionRefusedThenFailsOpen runs a second webhook with a config whose
// targetDeletions mode is Deny in one namespace, and points the configuration's
// targets.policyattachment.io at it: the deletion of a Gateway its policies rely on is
// refused there with the whole message, and only there; the namespace controller's
// deletions never reach it (matchConditions). Then that webhook stops, and the same
// deletion goes through: the configuration's failurePolicy Ignore, applied by the API
// server, so an outage never blocks a cleanup.
func TestTargetDeletionRefusedThenFailsOpen(t *testing.T) {
	ctx := context.Background()
	cl, w := newClient(t)
	for _, ns := range []string{"tdel-refuse", "tdel-refuse-app", "tdel-elsewhere"} {
		namespace(t, cl, ns)
	}
	config := &rules.Config{TargetDeletions: rules.TargetDeletions{Rules: []rules.TargetDeletionRule{{
		Mode: rules.Deny, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "tdel-refuse"}},
	}}}}
	require.NoError(t, config.Validate())
	stop := startTargetsWebhook(t, config)

	createDocs(t, cl, targetDeletionWorld("tdel-refuse", "tdel-refuse-app")...)
	createDocs(t, cl, targetDeletionWorld("tdel-elsewhere", "tdel-refuse-app")[0], targetDeletionWorld("tdel-elsewhere", "tdel-refuse-app")[2])
	refusal := `admission webhook "targets.policyattachment.io" denied the request: TargetInUse: deleting Gateway tdel-refuse/gw is refused (targetDeletions mode Deny in namespace "tdel-refuse"): ` +
		`it leaves 1 policy without a target, so it applies nowhere: ColorPolicy tdel-refuse/gw-defaults; ` +
		`it leaves 1 policy whose targets then attach to no Gateway, so it applies nowhere: a ColorPolicy in namespace "tdel-refuse-app"; ` +
		`retarget or delete those policies first, or ask your platform team to lift the mode`
	var err error
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err = cl.Delete(ctx, gatewayObject("tdel-refuse"), client.DryRunAll)
		assert.EqualError(c, err, refusal, "the dry run is refused")
	}, 20*time.Second, 100*time.Millisecond)
	err = cl.Delete(ctx, gatewayObject("tdel-refuse"))
	require.Error(t, err)
	assert.Equal(t, refusal, err.Error())
	assert.True(t, apierrors.IsForbidden(err), "403 Forbidden: %v", err)
	assert.Empty(t, w.Take(), "a refusal carries no warnings")

	// Another namespace keeps the default: warned, deleted.
	elsewhere := []string{`DeleteImpact: deleting Gateway tdel-elsewhere/gw leaves 1 policy without a target, so it applies nowhere: ColorPolicy tdel-elsewhere/gw-defaults`}
	waitForGatewayWarnings(t, cl, w, "tdel-elsewhere", elsewhere)
	require.NoError(t, cl.Delete(ctx, gatewayObject("tdel-elsewhere")))
	assert.Equal(t, elsewhere, w.Take())

	// The namespace controller empties namespaces being deleted: its deletions are never
	// sent to the webhook, so never refused. Anyone else's is reviewed, and counted: the
	// count below is one that moves.
	reviews := targetReviews(t)
	err = cl.Delete(ctx, gatewayObject("tdel-refuse"), client.DryRunAll)
	require.Error(t, err)
	assert.Equal(t, refusal, err.Error())
	assert.Equal(t, reviews+1, targetReviews(t), "a reviewed deletion is counted")
	reviews = targetReviews(t)
	asController := rest.CopyConfig(cfg)
	asController.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kube-system:namespace-controller",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
	controller, err := client.New(asController, client.Options{})
	require.NoError(t, err)
	require.NoError(t, controller.Delete(ctx, gatewayObject("tdel-refuse"), client.DryRunAll), "the namespace controller may delete")
	assert.Equal(t, reviews, targetReviews(t), "its deletion never reached the webhook")

	// The webhook goes away: the deletion it refused goes through, unreviewed.
	stop()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NoError(c, cl.Delete(ctx, gatewayObject("tdel-refuse")), "the deletion goes through with the webhook down")
	}, 20*time.Second, 100*time.Millisecond)
	assert.Empty(t, w.Take(), "nobody reviewed it")
}

// startTargetsWebhook runs one more webhook in-process with config, serving the cluster's
// certificate, and points the configuration's targets.policyattachment.io at it until the
// test ends. stop stops it (the configuration still points at it).
func startTargetsWebhook(t *testing.T, config *rules.Config) (stop func()) {
	t.Helper()
	base, err := url.Parse(cluster.BaseURL)
	require.NoError(t, err)
	certDir := t.TempDir()
	serving, err := cluster.TLSCertificate()
	require.NoError(t, err)
	var certPEM []byte
	for _, der := range serving.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	key, err := x509.MarshalPKCS8PrivateKey(serving.PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(certDir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))
	port, err := localcluster.FreePort()
	require.NoError(t, err)
	srv, err := admission.NewServer(cfg, admission.Options{Host: base.Hostname(), Port: port, CertDir: certDir,
		Table: kinds.BuiltinKindTable(), Config: config, Log: testLogger(), NoLiveReads: true, MetricsAddress: "0", ProbeAddress: "0"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cluster.TLS}, Timeout: time.Second}
	serveURL := fmt.Sprintf("https://%s:%d", base.Hostname(), port)
	require.NoError(t, localcluster.WaitReady(hc, serveURL+admission.PathReadyz, 30*time.Second))

	restore := pointTargetsWebhookAt(t, serveURL+admission.PathTargets)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(func() {
		stop()
		restore()
	})
	return stop
}

// pointTargetsWebhookAt sets the URL of targets.policyattachment.io and returns a function
// that sets it back.
func pointTargetsWebhookAt(t *testing.T, to string) (restore func()) {
	t.Helper()
	cl, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	set := func(url string) (previous string) {
		var v admissionregv1.ValidatingWebhookConfiguration
		require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Name: "policyattachment"}, &v))
		found := false
		for i := range v.Webhooks {
			if v.Webhooks[i].Name == "targets.policyattachment.io" {
				found = true
				require.NotNil(t, v.Webhooks[i].ClientConfig.URL, "the local cluster calls webhooks by URL")
				previous = *v.Webhooks[i].ClientConfig.URL
				v.Webhooks[i].ClientConfig.URL = &url
			}
		}
		require.True(t, found, "the local cluster registers the webhooks of deploy/base, targets.policyattachment.io among them")
		require.NoError(t, cl.Update(context.Background(), &v))
		return previous
	}
	previous := set(to)
	return func() { set(previous) }
}

// targetReviews counts the reviews of target deletions this process has answered.
func targetReviews(t *testing.T) float64 {
	t.Helper()
	return reviewsAnswered(t, "targets")
}
