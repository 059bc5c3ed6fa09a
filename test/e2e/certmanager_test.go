//go:build e2e

package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCertificateRenewalDropsNoReview runs where the webhook is deployed with the
// cert-manager overlay: a renewal forced as `cmctl renew` forces it, during a steady loop of
// conflicting policies, issues a new serving certificate (a new key: rotationPolicy Always);
// the kubelet updates the Secret's volume, every replica reloads it without a restart, and no
// review fails meanwhile. The renewed certificate verifies against the CA that cainjector
// keeps in both webhook configurations.
func TestCertificateRenewalDropsNoReview(t *testing.T) {
	cl, cs := deployed(t)
	ctx := context.Background()
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "policyattachment-webhook"}, cert)
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		t.Skip("needs the cert-manager overlay (make e2e-node deploys it second)")
	}
	require.NoError(t, err)

	before := servingCertificate(t, cs)
	reloads := certificateReloads(t, cs)
	// cmctl renew: the Issuing condition, set on the status by hand.
	conditions, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
	conditions = append(conditions, map[string]any{
		"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
		"message": "renewal forced by the e2e suite", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		"observedGeneration": cert.GetGeneration(),
	})
	require.NoError(t, unstructured.SetNestedSlice(cert.Object, conditions, "status", "conditions"))
	require.NoError(t, cl.Status().Update(ctx, cert))

	var renewed *x509.Certificate
	reloaded := func() bool {
		if renewed = servingCertificate(t, cs); renewed.SerialNumber.Cmp(before.SerialNumber) == 0 {
			return false
		}
		now := certificateReloads(t, cs)
		for pod, n := range now {
			if n <= reloads[pod] {
				return false
			}
		}
		return len(now) == 2
	}
	conflictLoop(t, cl, "renewal", "the certificate's renewal", reloaded)
	require.NotEqual(t, before.PublicKey, renewed.PublicKey, "rotationPolicy Always: a new key")

	validating, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "policyattachment", metav1.GetOptions{})
	require.NoError(t, err)
	mutating, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "policyattachment", metav1.GetOptions{})
	require.NoError(t, err)
	for config, bundle := range map[string][]byte{
		"ValidatingWebhookConfiguration": validating.Webhooks[0].ClientConfig.CABundle,
		"MutatingWebhookConfiguration":   mutating.Webhooks[0].ClientConfig.CABundle,
	} {
		roots := x509.NewCertPool()
		require.True(t, roots.AppendCertsFromPEM(bundle), "%s: no CA in the caBundle", config)
		_, err := renewed.Verify(x509.VerifyOptions{Roots: roots, DNSName: "policyattachment-webhook.policyattachment-system.svc"})
		require.NoError(t, err, "%s: the renewed certificate against the injected CA", config)
	}
}

// servingCertificate is the certificate in the Secret cert-manager writes and the webhook's
// pods mount.
func servingCertificate(t *testing.T, cs kubernetes.Interface) *x509.Certificate {
	t.Helper()
	s, err := cs.CoreV1().Secrets(ns).Get(context.Background(), "policyattachment-webhook-tls", metav1.GetOptions{})
	require.NoError(t, err)
	block, _ := pem.Decode(s.Data["tls.crt"])
	require.NotNil(t, block, "tls.crt holds no PEM block")
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

// certificateReloads counts, per running replica, the times it has loaded its serving
// certificate (controller-runtime's certwatcher logs each load, the first included).
func certificateReloads(t *testing.T, cs kubernetes.Interface) map[string]int {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=policyattachment-webhook"})
	require.NoError(t, err)
	counts := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		logs, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		require.NoError(t, err)
		counts[p.Name] = strings.Count(string(logs), "Updated current TLS certificate")
	}
	return counts
}
