package deploy

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/deployrender"
)

var chartDir = filepath.Join("..", "..", "deploy", "chart")

// helmRender renders the chart as release "policyattachment" in namespace with values.
func helmRender(t *testing.T, namespace string, values map[string]any) *deployrender.Chart {
	t.Helper()
	rendered, err := deployrender.Helm(chartDir, "policyattachment", namespace, values)
	require.NoError(t, err)
	return rendered
}

// generatedConfigMap is how kustomize names a ConfigMap after its content.
var generatedConfigMap = regexp.MustCompile(`^(policyattachment-config)-[a-z0-9]{10}$`)

// comparable turns rendered objects into YAML keyed by kind/namespace/name, with the one
// difference the two tools have by design taken out: kustomize names the config's ConfigMap
// after its content (an edit rolls the pods by the new name), the chart keeps the name and
// rolls the pods with a checksum annotation; kustomize wraps a Secret's base64. The config file itself is compared parsed
// (kustomize carries the file's comments, the chart renders values).
func comparable(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		o = o.DeepCopy()
		if m := generatedConfigMap.FindStringSubmatch(o.GetName()); m != nil {
			o.SetName(m[1])
		}
		if o.GetKind() == "ConfigMap" && o.GetName() == "policyattachment-config" {
			text, _, _ := unstructured.NestedString(o.Object, "data", "config.yaml")
			var parsed any
			require.NoError(t, yaml.Unmarshal([]byte(text), &parsed))
			require.NoError(t, unstructured.SetNestedField(o.Object, parsed, "data", "config.yaml"))
		}
		if o.GetKind() == "Secret" {
			// kustomize wraps base64 at 76 columns; the API server reads both alike.
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			for k, v := range data {
				data[k] = strings.Join(strings.Fields(v), "")
			}
			require.NoError(t, unstructured.SetNestedStringMap(o.Object, data, "data"))
		}
		if o.GetKind() == "Deployment" {
			annotations, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
			delete(annotations, "checksum/config")
			unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "annotations")
			if len(annotations) > 0 {
				require.NoError(t, unstructured.SetNestedStringMap(o.Object, annotations, "spec", "template", "metadata", "annotations"))
			}
			volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			for _, v := range volumes {
				cm, ok := v.(map[string]any)["configMap"].(map[string]any)
				if ok && generatedConfigMap.MatchString(cm["name"].(string)) {
					cm["name"] = generatedConfigMap.FindStringSubmatch(cm["name"].(string))[1]
				}
			}
			require.NoError(t, unstructured.SetNestedSlice(o.Object, volumes, "spec", "template", "spec", "volumes"))
		}
		text, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		out[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = string(text)
	}
	return out
}

// plainCerts writes the plain-certs overlay's out/ once (as `make certs`) and returns its
// three PEM files.
var plainCerts = sync.OnceValues(func() (map[string]string, error) {
	out, err := filepath.Abs(filepath.Join("..", "..", "deploy", "overlays", "plain-certs", "out"))
	if err != nil {
		return nil, err
	}
	if err := generateCerts(out); err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, name := range []string{"ca.crt", "tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			return nil, err
		}
		files[name] = string(data)
	}
	return files, nil
})

// TestChartRendersWhatKustomizeDoes: for the same settings, the chart and the kustomize
// overlays create the same objects, field for field (the chart's uninstall hook aside: Helm
// runs it only on uninstall).
func TestChartRendersWhatKustomizeDoes(t *testing.T) {
	certs, err := plainCerts()
	require.NoError(t, err)
	for _, tc := range []struct {
		name, kustomization string
		values              map[string]any
	}{{
		name:          "cert-manager",
		kustomization: filepath.Join("..", "..", "deploy", "overlays", "cert-manager"),
		values:        map[string]any{"namespace": map[string]any{"create": true}},
	}, {
		name:          "plain certs",
		kustomization: filepath.Join("..", "..", "deploy", "overlays", "plain-certs"),
		values: map[string]any{"namespace": map[string]any{"create": true}, "certificates": map[string]any{
			"certManager": map[string]any{"enabled": false},
			"provided":    map[string]any{"caBundle": certs["ca.crt"], "tlsCrt": certs["tls.crt"], "tlsKey": certs["tls.key"]},
		}},
	}, {
		name:          "monitoring",
		kustomization: filepath.Join("testdata", "with-monitoring"),
		values: map[string]any{"namespace": map[string]any{"create": true}, "metrics": map[string]any{
			"serviceMonitor": map[string]any{"enabled": true},
			"prometheusRule": map[string]any{"enabled": true},
			"dashboard":      map[string]any{"enabled": true},
		}},
	}, {
		name:          "reports",
		kustomization: filepath.Join("testdata", "with-reports"),
		values:        map[string]any{"namespace": map[string]any{"create": true}, "reports": map[string]any{"enabled": true}},
	}, {
		name:          "client auth",
		kustomization: filepath.Join("testdata", "with-client-auth"),
		values: map[string]any{"namespace": map[string]any{"create": true}, "clientAuth": map[string]any{
			"enabled": true, "caBundle": "-----BEGIN CERTIFICATE-----\nnot a certificate: the render test compares objects only\n-----END CERTIFICATE-----\n",
		}},
	}, {
		name:          "network policy",
		kustomization: filepath.Join("testdata", "with-network-policy"),
		values: map[string]any{"namespace": map[string]any{"create": true}, "networkPolicy": map[string]any{
			"enabled": true, "apiServerCIDRs": []any{"10.0.0.10/32"},
		}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fromKustomize, err := deployrender.Kustomize(tc.kustomization)
			require.NoError(t, err)
			fromHelm := helmRender(t, namespace, tc.values)
			want, got := comparable(t, fromKustomize), comparable(t, fromHelm.Objects)
			assert.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "the same objects")
			for key, w := range want {
				if g, ok := got[key]; ok {
					assert.Equal(t, w, g, key)
				}
			}
			for _, o := range fromHelm.Objects {
				if o.GetKind() == "Deployment" {
					checksum, _, _ := unstructured.NestedString(o.Object, "spec", "template", "metadata", "annotations", "checksum/config")
					assert.Regexp(t, `^[0-9a-f]{64}$`, checksum, "a config change rolls %s", o.GetName())
				}
			}
		})
	}
}

// index returns the rendered objects by kind/name.
func index(t *testing.T, objs []*unstructured.Unstructured) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		out[o.GetKind()+"/"+o.GetName()] = data
	}
	return out
}

// TestChartValues: each value platform teams set reaches the object it is about, in a
// namespace of the release's choosing.
func TestChartValues(t *testing.T) {
	const ns = "platform"
	rendered := helmRender(t, ns, map[string]any{
		"image":               map[string]any{"repository": "registry.internal/pa/webhook", "tag": "v0.1.0", "pullPolicy": "Always"},
		"replicas":            3,
		"resources":           map[string]any{"requests": map[string]any{"cpu": "200m", "memory": "256Mi"}, "limits": map[string]any{"memory": "1Gi"}},
		"podDisruptionBudget": map[string]any{"enabled": false},
		"priorityClassName":   "system-cluster-critical",
		"extraArgs":           []any{"--review-timeout=2s"},
		"webhook": map[string]any{"failurePolicy": "Ignore", "timeoutSeconds": 10, "targetDeletionsTimeoutSeconds": 3, "namespaceSelector": map[string]any{
			"matchExpressions": []any{map[string]any{"key": "tenant", "operator": "Exists"}},
		}},
		"certificates": map[string]any{"certManager": map[string]any{"enabled": false},
			"provided": map[string]any{"caBundle": "-----BEGIN CERTIFICATE-----\n", "existingSecret": "webhook-serving"}},
		"config": map[string]any{"enforcement": map[string]any{"default": "Warn"}, "targetDeletions": map[string]any{"services": true}},
	})
	objs := index(t, rendered.Objects)
	assert.NotContains(t, objs, "PodDisruptionBudget/policyattachment-webhook")
	assert.NotContains(t, objs, "Secret/policyattachment-webhook-tls", "the Secret is the user's")
	assert.NotContains(t, objs, "Namespace/"+ns, "namespace.create is off by default")
	assert.NotContains(t, objs, "Certificate/policyattachment-webhook")

	var d appsv1.Deployment
	decode(t, objs, "Deployment/policyattachment-webhook", &d)
	assert.Equal(t, ns, d.Namespace)
	assert.Equal(t, int32(3), *d.Spec.Replicas)
	pod := d.Spec.Template.Spec
	assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
	c := pod.Containers[0]
	assert.Equal(t, "registry.internal/pa/webhook:v0.1.0", c.Image)
	assert.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
	assert.Equal(t, "--review-timeout=2s", c.Args[len(c.Args)-1])
	assert.Equal(t, "1Gi", c.Resources.Limits.Memory().String())
	assert.Equal(t, "webhook-serving", pod.Volumes[0].Secret.SecretName)

	var v admissionregv1.ValidatingWebhookConfiguration
	decode(t, objs, "ValidatingWebhookConfiguration/"+webhookName, &v)
	vw := v.Webhooks[0]
	assert.Equal(t, admissionregv1.Ignore, *vw.FailurePolicy)
	assert.Equal(t, int32(10), *vw.TimeoutSeconds)
	assert.Equal(t, []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", ns}},
		{Key: "policyattachment.io/webhook", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"skip"}},
		{Key: "tenant", Operator: metav1.LabelSelectorOpExists},
	}, vw.NamespaceSelector.MatchExpressions, "the release's namespace is skipped by name: --create-namespace does not label it")
	assert.Equal(t, ns, vw.ClientConfig.Service.Namespace)
	assert.Equal(t, []byte("-----BEGIN CERTIFICATE-----\n"), vw.ClientConfig.CABundle)
	assert.Equal(t, admissionregv1.Fail, *v.Webhooks[1].FailurePolicy, "the namespace label's guard always fails closed")
	assertTargetDeletionsWebhook(t, v.Webhooks[2], "/validate-targets", 3, true)
	assert.Equal(t, vw.NamespaceSelector, v.Webhooks[2].NamespaceSelector)
	assert.Equal(t, []byte("-----BEGIN CERTIFICATE-----\n"), v.Webhooks[2].ClientConfig.CABundle)
	assert.Empty(t, v.Annotations, "no cainjector without cert-manager")
	var m admissionregv1.MutatingWebhookConfiguration
	decode(t, objs, "MutatingWebhookConfiguration/"+webhookName, &m)
	assert.Equal(t, admissionregv1.Ignore, *m.Webhooks[0].FailurePolicy)
	assert.Equal(t, vw.NamespaceSelector, m.Webhooks[0].NamespaceSelector)

	var cm corev1.ConfigMap
	decode(t, objs, "ConfigMap/policyattachment-config", &cm)
	settings, err := rules.LoadConfig([]byte(cm.Data["config.yaml"]), "config.yaml", kinds.BuiltinKindTable())
	require.NoError(t, err, cm.Data["config.yaml"])
	assert.True(t, settings.Relaxes(), "enforcement.default Warn reaches the file")
	assert.Contains(t, cm.Data["config.yaml"], "revealOtherNamespaces: false", "values merge over the defaults")
	assert.True(t, settings.TargetDeletions.Services, "the webhook reviews the Service deletions its configuration sends it")
	assert.Equal(t, rules.Warn, settings.TargetDeletions.Default)

	var binding rbacv1.ClusterRoleBinding
	decode(t, objs, "ClusterRoleBinding/policyattachment-webhook", &binding)
	assert.Equal(t, ns, binding.Subjects[0].Namespace)
}

// TestChartRefusesMissingCertificates: without cert-manager, a chart that would install a
// webhook no API server can verify is refused at render time, saying what to set.
func TestChartRefusesMissingCertificates(t *testing.T) {
	_, err := deployrender.Helm(chartDir, "policyattachment", namespace, map[string]any{
		"certificates": map[string]any{"certManager": map[string]any{"enabled": false}},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificates.provided.caBundle: the PEM of the CA that signed the serving certificate (or enable certificates.certManager)")
}

// TestChartUninstallHook: `helm uninstall` first runs a Job that deletes the two webhook
// configurations the chart installs, as a ServiceAccount that may delete those two objects
// and nothing else.
func TestChartUninstallHook(t *testing.T) {
	rendered := helmRender(t, "platform", nil)
	hooks := index(t, rendered.Hooks)
	require.Len(t, hooks, 4)
	for key, doc := range hooks {
		var u unstructured.Unstructured
		require.NoError(t, yaml.Unmarshal(doc, &u.Object))
		assert.Equal(t, "pre-delete", u.GetAnnotations()["helm.sh/hook"], key)
		assert.Equal(t, "before-hook-creation,hook-succeeded", u.GetAnnotations()["helm.sh/hook-delete-policy"], key)
	}
	var role rbacv1.ClusterRole
	decode(t, hooks, "ClusterRole/policyattachment-uninstall", &role)
	assert.Equal(t, []rbacv1.PolicyRule{{
		APIGroups:     []string{"admissionregistration.k8s.io"},
		Resources:     []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
		ResourceNames: []string{webhookName},
		Verbs:         []string{"get", "delete"},
	}}, role.Rules)
	var binding rbacv1.ClusterRoleBinding
	decode(t, hooks, "ClusterRoleBinding/policyattachment-uninstall", &binding)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "policyattachment-uninstall", Namespace: "platform"}}, binding.Subjects)

	var job batchv1.Job
	decode(t, hooks, "Job/policyattachment-uninstall", &job)
	pod := job.Spec.Template.Spec
	assert.Equal(t, "policyattachment-uninstall", pod.ServiceAccountName)
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot, "runs under the restricted Pod Security level")
	c := pod.Containers[0]
	assert.Equal(t, []string{"uninstall", "--name=" + webhookName}, c.Args)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	var d appsv1.Deployment
	decode(t, index(t, rendered.Objects), "Deployment/policyattachment-webhook", &d)
	assert.Equal(t, d.Spec.Template.Spec.Containers[0].Image, c.Image, "the webhook's own image")

	off := helmRender(t, "platform", map[string]any{"uninstallHook": map[string]any{"enabled": false}})
	assert.Empty(t, off.Hooks)
}

// TestChartLints: `helm lint` finds nothing wrong with the chart (an icon aside).
func TestChartLints(t *testing.T) {
	kube, err := chartutil.ParseKubeVersion(deployrender.KubeVersion)
	require.NoError(t, err)
	linter := lint.AllWithKubeVersion(chartDir, nil, namespace, kube)
	for _, msg := range linter.Messages {
		if msg.Severity > support.InfoSev {
			t.Errorf("helm lint: %s", msg)
		}
	}
}

// generateCerts writes a CA, a serving certificate and the caBundle patch into out, as
// `make certs` does.
func generateCerts(out string) error {
	gen := exec.Command("go", "run", "./certs", "-out", out)
	gen.Dir = filepath.Join("..", "..")
	if msg, err := gen.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return nil
}

// TestChartMetricsValues: metrics.reader renders the ClusterRole that may read /metrics
// without the ServiceMonitor and binds it to the ServiceAccounts listed; the ServiceMonitor
// takes the release's namespace, the interval and a tlsConfig of the user's.
func TestChartMetricsValues(t *testing.T) {
	const ns = "platform"
	objs := index(t, helmRender(t, ns, nil).Objects)
	assert.NotContains(t, objs, "ClusterRole/policyattachment-metrics-reader", "off by default")
	assert.NotContains(t, objs, "ServiceMonitor/policyattachment-webhook")

	objs = index(t, helmRender(t, ns, map[string]any{"metrics": map[string]any{
		"reader": map[string]any{"serviceAccounts": []any{map[string]any{"name": "prometheus-k8s", "namespace": "monitoring"}}},
	}}).Objects)
	var reader rbacv1.ClusterRole
	decode(t, objs, "ClusterRole/policyattachment-metrics-reader", &reader)
	assert.Equal(t, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, reader.Rules)
	var binding rbacv1.ClusterRoleBinding
	decode(t, objs, "ClusterRoleBinding/policyattachment-metrics-reader", &binding)
	assert.Equal(t, "policyattachment-metrics-reader", binding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}}, binding.Subjects)
	assert.NotContains(t, objs, "ServiceMonitor/policyattachment-webhook")

	verify := map[string]any{"serverName": "policyattachment-webhook." + ns + ".svc",
		"ca": map[string]any{"secret": map[string]any{"name": "policyattachment-webhook-tls", "key": "ca.crt"}}}
	objs = index(t, helmRender(t, ns, map[string]any{"metrics": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true, "interval": "1m", "tlsConfig": verify},
	}}).Objects)
	assert.Contains(t, objs, "ClusterRole/policyattachment-metrics-reader", "rendered with the ServiceMonitor")
	assert.NotContains(t, objs, "ClusterRoleBinding/policyattachment-metrics-reader", "nothing bound unless listed")
	var monitor unstructured.Unstructured
	decode(t, objs, "ServiceMonitor/policyattachment-webhook", &monitor.Object)
	assert.Equal(t, ns, monitor.GetNamespace())
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	endpoint := endpoints[0].(map[string]any)
	assert.Equal(t, "1m", endpoint["interval"])
	assert.Equal(t, "https", endpoint["scheme"])
	assert.Equal(t, verify, endpoint["tlsConfig"])
}

// TestNetworkPolicy: the shipped NetworkPolicy admits the review port from the API server's
// addresses only, the metrics port from the monitoring namespace, the probes port from
// anyone; the chart refuses to render it without the API server's addresses, which the
// cluster alone knows (the validating webhook fails closed: a policy that admits nobody to
// the review port would refuse every policy write).
func TestNetworkPolicy(t *testing.T) {
	rendered := helmRender(t, "platform", map[string]any{"networkPolicy": map[string]any{
		"enabled": true, "apiServerCIDRs": []any{"10.0.0.10/32", "10.0.0.11/32"}, "monitoringNamespace": "observability",
	}})
	var ingress []any
	for _, o := range rendered.Objects {
		if o.GetKind() == "NetworkPolicy" {
			assert.Equal(t, "platform", o.GetNamespace())
			ingress, _, _ = unstructured.NestedSlice(o.Object, "spec", "ingress")
		}
	}
	assert.Equal(t, []any{
		map[string]any{"from": []any{
			map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.10/32"}},
			map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.11/32"}},
		}, "ports": []any{map[string]any{"port": "https", "protocol": "TCP"}}},
		map[string]any{"from": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "observability"}}}},
			"ports": []any{map[string]any{"port": "metrics", "protocol": "TCP"}}},
		map[string]any{"ports": []any{map[string]any{"port": "probes", "protocol": "TCP"}}},
	}, ingress)

	off := helmRender(t, "platform", nil)
	for _, o := range off.Objects {
		assert.NotEqual(t, "NetworkPolicy", o.GetKind(), "off by default")
	}
	_, err := deployrender.Helm(chartDir, "policyattachment", "platform", map[string]any{"networkPolicy": map[string]any{"enabled": true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "networkPolicy.apiServerCIDRs is required with networkPolicy.enabled: the addresses the API server reaches pods from (on kubeadm and kind, the control-plane nodes' addresses: kubectl get endpoints kubernetes -n default); without them every policy write would be refused")

	fromKustomize, err := deployrender.Kustomize(filepath.Join("..", "..", "deploy", "overlays", "cert-manager"))
	require.NoError(t, err)
	for _, o := range fromKustomize {
		assert.NotEqual(t, "NetworkPolicy", o.GetKind(), "not in the overlays: a component of its own")
	}
}

// TestClientAuthValues: clientAuth gives the container the CA and the names, from the chart's
// ConfigMap or one of the operator's; without a CA the chart says what is missing.
func TestClientAuthValues(t *testing.T) {
	rendered := helmRender(t, "platform", map[string]any{"clientAuth": map[string]any{
		"enabled": true, "existingConfigMap": "apiserver-ca", "certNames": []any{"kube-apiserver-webhook-client", "apiserver"},
	}})
	for _, o := range rendered.Objects {
		assert.NotEqual(t, "policyattachment-apiserver-client-ca", o.GetName(), "the operator's ConfigMap is used, none is made")
		if o.GetKind() != "Deployment" || o.GetName() != "policyattachment-webhook" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		assert.Subset(t, args, []string{"--client-ca-file=/etc/policyattachment-client-ca/ca.crt",
			"--client-cert-name=kube-apiserver-webhook-client", "--client-cert-name=apiserver"})
		volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
		assert.Contains(t, volumes, map[string]any{"name": "apiserver-client-ca", "configMap": map[string]any{"name": "apiserver-ca"}})
	}
	_, err := deployrender.Helm(chartDir, "policyattachment", "platform", map[string]any{"clientAuth": map[string]any{"enabled": true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "clientAuth.caBundle is required with clientAuth.enabled (the PEM of the CA that signs the API server's client certificate), or clientAuth.existingConfigMap naming a ConfigMap whose ca.crt holds it")
}
