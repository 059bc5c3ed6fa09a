package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/certs"
	"github.com/policyattachment/webhook/pkg/claims"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestOnlyTheAPIServersReviewsCount runs a control plane of its own whose API server
// presents a client certificate to the webhooks (an AdmissionConfiguration, as README's
// "Only the API server's reviews count" tells operators to write it), and the webhook with
// --client-ca-file and --client-cert-name. Writes through the API server are judged; a
// review forged straight to the webhook is refused at the handshake, whatever certificate
// it carries short of the API server's, and takes no claim.
func TestOnlyTheAPIServersReviewsCount(t *testing.T) {
	c, clientCA, err := localcluster.StartAuthenticated(filepath.Join("..", "crds"))
	require.NoError(t, err)
	defer func() { _ = c.Stop() }()
	c.ClaimNamespace = "policyattachment-system"
	ctx, cancel := context.WithCancel(context.Background())
	done, err := c.StartWebhook(ctx, kinds.BuiltinKindTable(), testLogger())
	require.NoError(t, err)
	defer func() { cancel(); <-done }()

	cl, _ := testkit.NewClient(t, c.Config)
	namespace(t, cl, "authenticated")
	err = cl.Create(context.Background(), object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: bad-kind, namespace: authenticated}
spec:
  targetRefs: [{group: "", kind: Service, name: b1}]
  color: red`))
	assert.Equal(t, `admission webhook "validate.policyattachment.io" denied the request: ColorPolicy.policies.controller.io "bad-kind" is invalid: spec.targetRefs[0].kind: Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/HTTPRoute"`,
		denial(err), "the API server's reviews are judged")
	require.NoError(t, cl.Create(context.Background(), object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: good, namespace: authenticated}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: red`)), "and admitted")

	forged := []byte(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "forged", "operation": "CREATE",
		"kind": {"group": "policies.controller.io", "version": "v1", "kind": "ColorPolicy"},
		"resource": {"group": "policies.controller.io", "version": "v1", "resource": "colorpolicies"},
		"namespace": "authenticated", "name": "ghost", "object": {"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
		"metadata": {"name": "ghost", "namespace": "authenticated"},
		"spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "forged-gw"}], "color": "red"}}}}`)
	otherCA, err := certs.NewCA("someone-else", time.Hour)
	require.NoError(t, err)
	keyPair := func(ca *certs.CA, name string) []tls.Certificate {
		certPEM, keyPEM, err := ca.IssueClient(name, nil, time.Hour)
		require.NoError(t, err)
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		return []tls.Certificate{pair}
	}
	for name, certificates := range map[string][]tls.Certificate{
		"no certificate":                     nil,
		"a certificate of another CA":        keyPair(otherCA, localcluster.APIServerClientName),
		"the right CA's, under another name": keyPair(clientCA.CA, "tenant"),
	} {
		t.Run(name, func(t *testing.T) {
			conf := c.TLS.Clone()
			conf.Certificates = certificates
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: conf}, Timeout: 5 * time.Second}
			resp, err := hc.Post(c.BaseURL+"/validate", "application/json", bytes.NewReader(forged))
			if err == nil {
				resp.Body.Close()
			}
			require.Error(t, err, "refused at the handshake, never read")
		})
	}
	// The forged reviews took no claim at the Gateway they named.
	forgedKey := "policies.controller.io/ColorPolicy gateway.networking.k8s.io/Gateway/authenticated/forged-gw"
	keys := func() []string {
		leases := &unstructured.UnstructuredList{}
		leases.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("LeaseList"))
		require.NoError(t, cl.List(context.Background(), leases, client.InNamespace(c.ClaimNamespace), client.MatchingLabels{claims.LabelClaim: "true"}))
		var out []string
		for _, l := range leases.Items {
			out = append(out, l.GetAnnotations()[claims.AnnotationKey])
		}
		return out
	}
	assert.NotContains(t, keys(), forgedKey)

	// The same review with the harness's own certificate (the right CA and name) is answered,
	// and claims that key: the refusals above are the certificates', not the port's.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: c.TLS}, Timeout: 5 * time.Second}
	resp, err := hc.Post(c.BaseURL+"/validate", "application/json", bytes.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, keys(), forgedKey)
}
