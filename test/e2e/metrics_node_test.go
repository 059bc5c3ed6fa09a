//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// TestMetricsAsPrometheusScrapesThem reads the deployed webhook's /metrics the way the
// shipped ServiceMonitor has Prometheus do it: every endpoint of the Service's metrics port,
// HTTPS, with a ServiceAccount's token in the Authorization header. The webhook has the API
// server review each token with the shipped RBAC (policyattachment-webhook-metrics-auth):
// without a token 401, a ServiceAccount not bound to the shipped ClusterRole
// policyattachment-metrics-reader 403, one bound to it 200 and the webhook's metrics, with
// the reviewed namespace left out of policyattachment_reviews_total. Where the serving
// Secret holds its CA (cert-manager's ca.crt), the certificate is verified as the README's
// ServiceMonitor patch has Prometheus verify it (serverName: the Service's DNS name);
// otherwise it is not, as the shipped ServiceMonitor does.
func TestMetricsAsPrometheusScrapesThem(t *testing.T) {
	_, cs := deployed(t)
	ctx := context.Background()

	// The ClusterRole ships with the monitoring component (and the chart's metrics values);
	// the overlays the suite runs on do not carry it, so the test installs the shipped file.
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "chart", "files", "monitoring", "metrics-reader.yaml"))
	require.NoError(t, err)
	var role rbacv1.ClusterRole
	require.NoError(t, yaml.UnmarshalStrict(data, &role))
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err == nil {
		defer func() { _ = cs.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) }()
	} else {
		require.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	}
	reader := serviceAccountToken(t, cs, "e2e-metrics-reader", role.Name)
	nobody := serviceAccountToken(t, cs, "e2e-metrics-nobody", "")

	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} // as the shipped ServiceMonitor
	secret, err := cs.CoreV1().Secrets(ns).Get(ctx, "policyattachment-webhook-tls", metav1.GetOptions{})
	require.NoError(t, err)
	if ca := secret.Data["ca.crt"]; len(ca) > 0 {
		pool := x509.NewCertPool()
		require.True(t, pool.AppendCertsFromPEM(ca))
		conf = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: "policyattachment-webhook." + ns + ".svc"}
		t.Log("verifying the metrics port's certificate against the Secret's ca.crt")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
	get := func(url, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err, url)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}

	// Each replica's metrics port, as Prometheus' discovery finds it (the Service's endpoints
	// of the port named metrics), reached through a port-forward: this machine's network does
	// not route to pod IPs.
	require.Len(t, metricsTargets(t, cs), 2, "both replicas are endpoints of the metrics port")
	var targets []string
	for _, pod := range readyWebhookPods(t, cs) {
		targets = append(targets, "https://"+forwardTo(t, cs, pod, 8443)+"/metrics")
	}
	require.Len(t, targets, 2, "both replicas")
	for _, url := range targets {
		code, body := get(url, "")
		assert.Equal(t, http.StatusUnauthorized, code, "%s without a token: %s", url, body)
		code, body = get(url, nobody)
		assert.Equal(t, http.StatusForbidden, code, "%s as a ServiceAccount that may not get /metrics: %s", url, body)
		code, body = get(url, reader)
		require.Equal(t, http.StatusOK, code, "%s as a ServiceAccount bound to %s: %s", url, role.Name, body)
		assert.Contains(t, body, "policyattachment_build_info{")
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "policyattachment_reviews_total{") {
				assert.Contains(t, line, `namespace=""`, "no --metrics-namespace-label in the shipped Deployment")
			}
		}
		plain := strings.Replace(url, "https://", "http://", 1)
		resp, err := http.Get(plain)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: no plain HTTP", plain)
	}
}

// metricsTargets is what Prometheus' Kubernetes discovery gives the ServiceMonitor: the
// ready endpoints of the Service's port named metrics, as https://IP:PORT/metrics.
func metricsTargets(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	var out []string
	eventuallyWithin(t, 60*time.Second, func() error {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=policyattachment-webhook"})
		if err != nil {
			return err
		}
		out = nil
		for _, s := range list.Items {
			var port int32
			for _, p := range s.Ports {
				if p.Name != nil && *p.Name == "metrics" && p.Port != nil {
					port = *p.Port
				}
			}
			for _, e := range s.Endpoints {
				if port == 0 || (e.Conditions.Ready != nil && !*e.Conditions.Ready) {
					continue
				}
				for _, a := range e.Addresses {
					out = append(out, "https://"+net.JoinHostPort(a, strconv.Itoa(int(port)))+"/metrics")
				}
			}
		}
		if len(out) != 2 {
			return fmt.Errorf("%d ready metrics endpoints, want 2", len(out))
		}
		return nil
	})
	return out
}

// serviceAccountToken creates a ServiceAccount in the default namespace (bound to the
// ClusterRole role unless empty), removed when the test ends, and returns a token of it.
func serviceAccountToken(t *testing.T, cs kubernetes.Interface, name, role string) string {
	t.Helper()
	ctx := context.Background()
	const saNamespace = "default"
	_, err := cs.CoreV1().ServiceAccounts(saNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().ServiceAccounts(saNamespace).Delete(ctx, name, metav1.DeleteOptions{}) })
	if role != "" {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: saNamespace}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(saNamespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}
