// Package deploy checks the rendered manifests in deploy/ against what the README and the
// issue promise, decoding them into the real API types (apps/v1, admissionregistration/v1,
// cert-manager's Certificate and Issuer).
package deploy

import (
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/deployrender"
)

const (
	namespace   = "policyattachment-system"
	serviceDNS  = "policyattachment-webhook.policyattachment-system.svc"
	tlsSecret   = "policyattachment-webhook-tls"
	webhookName = "policyattachment"
)

// render runs kustomize on a folder of deploy/ and indexes the objects by kind/name.
func render(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return renderPath(t, filepath.Join("..", "..", "deploy", dir))
}

// renderPath is render of any folder.
func renderPath(t *testing.T, path string) map[string][]byte {
	t.Helper()
	objs, err := deployrender.Kustomize(path)
	require.NoError(t, err)
	return index(t, objs)
}

func decode(t *testing.T, objs map[string][]byte, key string, into any) {
	t.Helper()
	doc, ok := objs[key]
	require.True(t, ok, "%s is rendered", key)
	require.NoError(t, yaml.UnmarshalStrict(doc, into), key)
}

func TestBase(t *testing.T) {
	objs := render(t, "base")

	var ns corev1.Namespace
	decode(t, objs, "Namespace/"+namespace, &ns)
	assert.Equal(t, "skip", ns.Labels["policyattachment.io/webhook"], "the webhook's own namespace is never blocked")

	var v admissionregv1.ValidatingWebhookConfiguration
	decode(t, objs, "ValidatingWebhookConfiguration/"+webhookName, &v)
	require.Len(t, v.Webhooks, 3)
	vw := v.Webhooks[0]
	assert.Equal(t, admissionregv1.Fail, *vw.FailurePolicy, "validation fails closed")
	assert.Equal(t, []string{"v1"}, vw.AdmissionReviewVersions)
	assert.Equal(t, admissionregv1.SideEffectClassNoneOnDryRun, *vw.SideEffects, "a review writes claims (Leases), a dry run none")
	assert.Equal(t, admissionregv1.Equivalent, *vw.MatchPolicy)
	assert.Equal(t, int32(5), *vw.TimeoutSeconds)
	assert.Equal(t, "/validate", *vw.ClientConfig.Service.Path)
	assertSkipsProtectedNamespaces(t, vw.NamespaceSelector.MatchExpressions)

	// The skip label's guard: namespaces only, failing closed, and only for the writes that
	// change the label and that RBAC does not already allow (matchConditions): every other
	// namespace write never reaches it.
	guard := v.Webhooks[1]
	assert.Equal(t, "namespaces.policyattachment.io", guard.Name)
	assert.Equal(t, admissionregv1.Fail, *guard.FailurePolicy)
	assert.Equal(t, admissionregv1.SideEffectClassNone, *guard.SideEffects)
	assert.Equal(t, "/validate-namespaces", *guard.ClientConfig.Service.Path)
	assert.Nil(t, guard.NamespaceSelector, "every namespace's label is guarded, the webhook's own included")
	require.Len(t, guard.Rules, 1)
	assert.Equal(t, []string{""}, guard.Rules[0].APIGroups)
	assert.Equal(t, []string{"namespaces"}, guard.Rules[0].Resources)
	assert.Equal(t, []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update}, guard.Rules[0].Operations)
	require.Len(t, guard.MatchConditions, 2)
	assert.Contains(t, guard.MatchConditions[0].Expression, "'policyattachment.io/webhook' in object.metadata.labels")
	assert.Equal(t, "!authorizer.group('policyattachment.io').resource('namespaces').name(object.metadata.name).check('skip').allowed()",
		guard.MatchConditions[1].Expression)
	var skip rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-namespace-skip", &skip)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"policyattachment.io"}, Resources: []string{"namespaces"}, Verbs: []string{"skip"}}}, skip.Rules)

	assertTargetDeletionsWebhook(t, v.Webhooks[2], "/validate-targets", 2, false)
	assertSkipsProtectedNamespaces(t, v.Webhooks[2].NamespaceSelector.MatchExpressions)

	var m admissionregv1.MutatingWebhookConfiguration
	decode(t, objs, "MutatingWebhookConfiguration/"+webhookName, &m)
	require.Len(t, m.Webhooks, 1)
	mw := m.Webhooks[0]
	assert.Equal(t, admissionregv1.Ignore, *mw.FailurePolicy, "mutation fails open")
	assert.Equal(t, admissionregv1.IfNeededReinvocationPolicy, *mw.ReinvocationPolicy)
	assert.Equal(t, "/mutate", *mw.ClientConfig.Service.Path)
	assertSkipsProtectedNamespaces(t, mw.NamespaceSelector.MatchExpressions)

	// Every built-in policy kind is reviewed by both webhooks, and the webhook's own
	// ClusterRole lets it list and watch the kind (without, readiness would stay 503).
	var role rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-webhook", &role)
	for _, row := range kinds.BuiltinKindTable().Rows() {
		resource := pluralOf(row.Kind)
		for _, rule := range []admissionregv1.RuleWithOperations{vw.Rules[0], mw.Rules[0]} {
			assert.Contains(t, rule.APIGroups, row.Group, row.Kind)
			assert.Contains(t, rule.Resources, resource, row.Kind)
		}
		granted := slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, row.Group) && slices.Contains(r.Resources, resource) &&
				slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
		})
		assert.True(t, granted, "the ClusterRole does not let the webhook list and watch %s.%s", resource, row.Group)
	}
	// Policy kinds may be cluster-scoped: every rule covers both scopes, so what `webhook
	// check` judges is what the deployed webhook sees.
	for _, rules := range [][]admissionregv1.RuleWithOperations{vw.Rules, mw.Rules} { // policy kinds only
		for _, r := range rules {
			require.NotNil(t, r.Scope)
			assert.Equal(t, admissionregv1.AllScopes, *r.Scope, "%v", r.Resources)
		}
	}
	assert.Contains(t, vw.Rules[1].Resources, "referencegrants", "deleting a ReferenceGrant is reviewed for its warning")
	assert.Equal(t, []admissionregv1.OperationType{admissionregv1.Delete}, vw.Rules[1].Operations)

	var d appsv1.Deployment
	decode(t, objs, "Deployment/policyattachment-webhook", &d)
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	pod := d.Spec.Template.Spec
	require.NotEmpty(t, pod.TopologySpreadConstraints)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
	c := pod.Containers[0]
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	// Probes and metrics on ports of their own, named in the container: the probes plain HTTP
	// (the kubelet's), the metrics HTTPS for callers the API server vouches for (no
	// --metrics-secure=false, which would serve them to anyone).
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, corev1.URISchemeHTTP, c.ReadinessProbe.HTTPGet.Scheme)
	assert.Equal(t, "probes", c.ReadinessProbe.HTTPGet.Port.String())
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "probes", c.LivenessProbe.HTTPGet.Port.String())
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, map[string]int32{"https": 9443, "metrics": 8443, "probes": 8081}, ports)
	assert.Subset(t, c.Args, []string{"--port=9443", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"})
	for _, arg := range c.Args {
		assert.False(t, strings.HasPrefix(arg, "--metrics-secure"), "metrics are served with authentication: %s", arg)
		assert.False(t, strings.HasPrefix(arg, "--metrics-namespace-label"), "metrics carry no names: %s", arg)
	}
	var svc corev1.Service
	decode(t, objs, "Service/policyattachment-webhook", &svc)
	require.Len(t, svc.Spec.Ports, 2)
	assert.Equal(t, "metrics", svc.Spec.Ports[1].Name)
	assert.Equal(t, "metrics", svc.Spec.Ports[1].TargetPort.String())
	assert.False(t, c.Resources.Requests.Cpu().IsZero())
	assert.False(t, c.Resources.Limits.Memory().IsZero())
	env := map[string]string{}
	for _, e := range c.Env {
		require.NotNil(t, e.ValueFrom, e.Name)
		env[e.Name] = e.ValueFrom.FieldRef.FieldPath
	}
	assert.Equal(t, map[string]string{"POD_NAMESPACE": "metadata.namespace", "POD_NAME": "metadata.name"}, env,
		"claims in the pod's namespace, named by the pod; no GOMEMLIMIT: webhook serve derives a soft limit with headroom from the container's memory limit")
	// The metrics port has the API server review each caller's token and permission: the
	// webhook may ask, and nothing more.
	var metricsAuth rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-webhook-metrics-auth", &metricsAuth)
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}, metricsAuth.Rules)
	var metricsAuthBinding rbacv1.ClusterRoleBinding
	decode(t, objs, "ClusterRoleBinding/policyattachment-webhook-metrics-auth", &metricsAuthBinding)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "policyattachment-webhook", Namespace: namespace}}, metricsAuthBinding.Subjects)
	assert.Equal(t, "policyattachment-webhook-metrics-auth", metricsAuthBinding.RoleRef.Name)
	var claimsRole rbacv1.Role
	decode(t, objs, "Role/policyattachment-webhook-claims", &claimsRole)
	assert.Equal(t, namespace, claimsRole.Namespace)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "list", "create", "update", "delete"}}}, claimsRole.Rules, "the webhook writes nothing but its claims, in its own namespace, and lists them to sweep them")
	var claimsBinding rbacv1.RoleBinding
	decode(t, objs, "RoleBinding/policyattachment-webhook-claims", &claimsBinding)
	assert.Equal(t, "policyattachment-webhook", claimsBinding.Subjects[0].Name)
	assert.Equal(t, tlsSecret, pod.Volumes[0].Secret.SecretName)
	assert.Contains(t, objs, "PodDisruptionBudget/policyattachment-webhook")

	// The config file reaches the container and is one the webhook accepts.
	require.Len(t, pod.Volumes, 2)
	configMapName := pod.Volumes[1].ConfigMap.Name
	assert.Regexp(t, `^policyattachment-config-[a-z0-9]+$`, configMapName, "named after its content, so an edit rolls the Deployment")
	assert.Contains(t, c.Args, "--config=/etc/policyattachment/config.yaml")
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "config", MountPath: "/etc/policyattachment", ReadOnly: true})
	var cm corev1.ConfigMap
	decode(t, objs, "ConfigMap/"+configMapName, &cm)
	settings, err := rules.LoadConfig([]byte(cm.Data["config.yaml"]), "config.yaml", kinds.BuiltinKindTable())
	require.NoError(t, err)
	assert.False(t, settings.Relaxes(), "the shipped config denies")

	assert.Equal(t, int32(443), svc.Spec.Ports[0].Port)
	assert.Equal(t, int32(443), *vw.ClientConfig.Service.Port)
}

// assertTargetDeletionsWebhook: the review of target deletions sees DELETE of Gateways,
// ListenerSets and every xRoute (and of Services when the config asks), fails open with a
// short timeout, has no side effects, and is never sent the deletions of the controllers that
// delete on someone else's decision (docs/target-deletions.md).
func assertTargetDeletionsWebhook(t *testing.T, w admissionregv1.ValidatingWebhook, path string, timeout int32, services bool) {
	t.Helper()
	assert.Equal(t, "targets.policyattachment.io", w.Name)
	assert.Equal(t, admissionregv1.Ignore, *w.FailurePolicy, "an outage never blocks a cleanup")
	assert.Equal(t, admissionregv1.SideEffectClassNone, *w.SideEffects)
	assert.Equal(t, admissionregv1.Equivalent, *w.MatchPolicy)
	assert.Equal(t, timeout, *w.TimeoutSeconds)
	assert.Equal(t, []string{"v1"}, w.AdmissionReviewVersions)
	assert.Equal(t, path, *w.ClientConfig.Service.Path)
	namespaced := admissionregv1.NamespacedScope
	want := []admissionregv1.RuleWithOperations{{
		Operations: []admissionregv1.OperationType{admissionregv1.Delete},
		Rule: admissionregv1.Rule{APIGroups: []string{"gateway.networking.k8s.io"}, APIVersions: []string{"*"},
			Resources: []string{"gateways", "listenersets", "httproutes", "grpcroutes", "tcproutes", "tlsroutes", "udproutes"}, Scope: &namespaced},
	}}
	if services {
		want = append(want, admissionregv1.RuleWithOperations{
			Operations: []admissionregv1.OperationType{admissionregv1.Delete},
			Rule:       admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}, Scope: &namespaced},
		})
	}
	assert.Equal(t, want, w.Rules)
	// Every kind whose deletion the webhook reviews is in the rules, and nothing else.
	var reviewed []string
	for _, info := range kinds.TargetKinds() {
		if (&rules.Config{TargetDeletions: rules.TargetDeletions{Services: services}}).ReviewsDeletionOf(info.GroupKind()) {
			reviewed = append(reviewed, info.Group+"/"+strings.ToLower(info.Kind)+"s")
		}
	}
	var registered []string
	for _, r := range w.Rules {
		for _, res := range r.Resources {
			registered = append(registered, r.APIGroups[0]+"/"+res)
		}
	}
	assert.ElementsMatch(t, reviewed, registered)
	assert.Equal(t, []admissionregv1.MatchCondition{{Name: "not-a-cleanup-controller",
		Expression: "!(request.userInfo.username in ['system:serviceaccount:kube-system:namespace-controller', 'system:serviceaccount:kube-system:generic-garbage-collector', 'system:kube-controller-manager'])"}},
		w.MatchConditions)
}

func assertSkipsProtectedNamespaces(t *testing.T, exprs []metav1.LabelSelectorRequirement) {
	t.Helper()
	got := map[string][]string{}
	for _, e := range exprs {
		got[e.Key] = e.Values
	}
	assert.Equal(t, []string{"kube-system", namespace}, got["kubernetes.io/metadata.name"], "its own namespace by name too, labelled or not")
	assert.Equal(t, []string{"skip"}, got["policyattachment.io/webhook"])
}

func TestCertManagerOverlay(t *testing.T) {
	objs := render(t, filepath.Join("overlays", "cert-manager"))
	var serving cmapi.Certificate
	decode(t, objs, "Certificate/policyattachment-webhook", &serving)
	assert.Contains(t, serving.Spec.DNSNames, serviceDNS)
	assert.Equal(t, tlsSecret, serving.Spec.SecretName, "the Deployment mounts this Secret")
	assert.Equal(t, "policyattachment-ca", serving.Spec.IssuerRef.Name)

	var ca cmapi.Certificate
	decode(t, objs, "Certificate/policyattachment-ca", &ca)
	assert.True(t, ca.Spec.IsCA)
	var caIssuer cmapi.Issuer
	decode(t, objs, "Issuer/policyattachment-ca", &caIssuer)
	assert.Equal(t, ca.Spec.SecretName, caIssuer.Spec.CA.SecretName)

	for _, key := range []string{"ValidatingWebhookConfiguration/" + webhookName, "MutatingWebhookConfiguration/" + webhookName} {
		var u unstructured.Unstructured
		decode(t, objs, key, &u.Object)
		assert.Equal(t, namespace+"/"+serving.Name, u.GetAnnotations()["cert-manager.io/inject-ca-from"], key)
	}
}

func TestPlainCertsOverlay(t *testing.T) {
	certs, err := plainCerts()
	require.NoError(t, err)
	caPEM := []byte(certs["ca.crt"])

	objs := render(t, filepath.Join("overlays", "plain-certs"))
	var v admissionregv1.ValidatingWebhookConfiguration
	decode(t, objs, "ValidatingWebhookConfiguration/"+webhookName, &v)
	require.Len(t, v.Webhooks, 3)
	for _, w := range v.Webhooks {
		assert.Equal(t, caPEM, w.ClientConfig.CABundle, w.Name)
	}
	assert.Len(t, v.Webhooks[0].Rules, 2, "the caBundle patch keeps the rules")
	var m admissionregv1.MutatingWebhookConfiguration
	decode(t, objs, "MutatingWebhookConfiguration/"+webhookName, &m)
	assert.Equal(t, caPEM, m.Webhooks[0].ClientConfig.CABundle)

	var secret corev1.Secret
	decode(t, objs, "Secret/"+tlsSecret, &secret)
	block, _ := pem.Decode(secret.Data["tls.crt"])
	require.NotNil(t, block)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: serviceDNS})
	assert.NoError(t, err, "the serving certificate is valid for the Service")
}

// pluralOf is the resource name of a policy kind, as its CRD names it (every built-in kind
// ends in Policy or Processor).
func pluralOf(kind string) string {
	lower := strings.ToLower(kind)
	if strings.HasSuffix(lower, "y") {
		return strings.TrimSuffix(lower, "y") + "ies"
	}
	return lower + "s"
}

// TestReportsComponent: the opt-in reports writer runs as its own ServiceAccount, which
// reads what the webhook reads and writes nothing but Reports; the admission pods' role
// gains no write. One replica, the same image and config as the webhook.
func TestReportsComponent(t *testing.T) {
	objs := renderPath(t, filepath.Join("testdata", "with-reports"))
	var d appsv1.Deployment
	decode(t, objs, "Deployment/policyattachment-reports", &d)
	assert.Equal(t, int32(1), *d.Spec.Replicas)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type, "never two writers")
	pod := d.Spec.Template.Spec
	assert.Equal(t, "policyattachment-reports", pod.ServiceAccountName)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, "report", c.Args[0])
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)

	var webhook appsv1.Deployment
	decode(t, objs, "Deployment/policyattachment-webhook", &webhook)
	assert.Equal(t, webhook.Spec.Template.Spec.Containers[0].Image, c.Image)
	assert.Equal(t, webhook.Spec.Template.Spec.Volumes[1].ConfigMap.Name, pod.Volumes[0].ConfigMap.Name, "the webhook's config, by its generated name")

	var write rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-reports-write", &write)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"openreports.io"}, Resources: []string{"reports"},
		Verbs: []string{"get", "list", "create", "update", "delete"}}}, write.Rules)
	for _, name := range []string{"policyattachment-reports-read", "policyattachment-reports-read-discovered", "policyattachment-reports-write"} {
		var b rbacv1.ClusterRoleBinding
		decode(t, objs, "ClusterRoleBinding/"+name, &b)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "policyattachment-reports", Namespace: namespace}}, b.Subjects, name)
	}
	var read rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-webhook", &read)
	for _, rule := range read.Rules {
		assert.Subset(t, []string{"get", "list", "watch"}, rule.Verbs, "the webhook's role stays read-only")
	}
}
