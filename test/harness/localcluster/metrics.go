package localcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// MetricsReaderRole is the shipped ClusterRole that may read the webhook's /metrics
// (deploy/chart/files/monitoring/metrics-reader.yaml).
const MetricsReaderRole = "policyattachment-metrics-reader"

// metricsScraper is the ServiceAccount ScrapeMetrics reads /metrics as, as Prometheus's own.
const metricsScraperNamespace, metricsScraper = "default", "policyattachment-metrics-scraper"

// ServiceAccountToken creates the ServiceAccount namespace/name when missing and returns a
// token of it (a TokenRequest, valid for an hour). With readsMetrics, the ServiceAccount is
// bound to the shipped ClusterRole that may read /metrics (installed when missing), as the
// README tells users to bind Prometheus'.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string, readsMetrics bool) (string, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	if readsMetrics {
		role, err := shippedMetricsReader()
		if err != nil {
			return "", err
		}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("installing ClusterRole %s: %w", role.Name, err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderRole + "-" + namespace + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReaderRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}},
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("binding %s to %s/%s: %w", MetricsReaderRole, namespace, name, err)
		}
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// shippedMetricsReader reads the ClusterRole users install with the monitoring component.
func shippedMetricsReader() (*rbacv1.ClusterRole, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("locating the module: %w", err)
	}
	path := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "deploy", "chart", "files", "monitoring", "metrics-reader.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if role.Name != MetricsReaderRole {
		return nil, fmt.Errorf("%s: ClusterRole %q, want %q", path, role.Name, MetricsReaderRole)
	}
	return role, nil
}

// GetMetrics reads url (the webhook's /metrics, MetricsURL) over HTTPS trusting the
// cluster's CA, with token as its bearer token when not empty, and returns the status code
// and the body.
func (c *Cluster) GetMetrics(url, token string) (int, string, error) {
	conf := c.TLS.Clone()
	conf.ServerName = "localhost" // the serving certificate's name; the port listens on loopback
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// ScrapeMetrics reads the webhook's /metrics as Prometheus does: over HTTPS, with the token
// of a ServiceAccount bound to the shipped ClusterRole policyattachment-metrics-reader.
func (c *Cluster) ScrapeMetrics() (string, error) {
	c.scraperOnce.Do(func() {
		c.scraperToken, c.scraperErr = c.ServiceAccountToken(context.Background(), metricsScraperNamespace, metricsScraper, true)
	})
	if c.scraperErr != nil {
		return "", c.scraperErr
	}
	code, body, err := c.GetMetrics(c.MetricsURL, c.scraperToken)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("GET %s: %d %s", c.MetricsURL, code, strings.TrimSpace(body))
	}
	return body, nil
}
