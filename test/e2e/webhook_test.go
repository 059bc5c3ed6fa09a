//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// The tests run in file order and share one topology; each names its own objects.

func TestDenials(t *testing.T) {
	cl, _ := newClient(t)
	apply(t, cl, load(t, "topology.yaml")...)

	expectDenied(t, cl, load(t, "invalid-targetref.yaml")[0], denied+
		"ColorPolicy.policies.controller.io \"bad-refs\" is invalid: [spec.targetRefs[0].group: Invalid value: \"gateway.networking.k8s.io/v1\": InvalidTargetRef: must be a lowercase DNS subdomain without a version (for example `gateway.networking.k8s.io`), or empty for the core group, spec.targetRefs[1].kind: Unsupported value: \"Service\": InvalidTargetRef: supported values: \"gateway.networking.k8s.io/Gateway\", \"gateway.networking.k8s.io/HTTPRoute\"]")
	expectDenied(t, cl, load(t, "ref-not-permitted.yaml")[0], denied+
		`ColorPolicy.policies.controller.io "cross-ns" is invalid: spec.targetRefs[0].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "e2e-infra" lets ColorPolicy from namespace "e2e-app" reference Gateway "gw"`)
	expectDenied(t, cl, load(t, "multiple-merge-strategies.yaml")[0], denied+
		"ColorPolicy.policies.controller.io \"both-ways\" is invalid: spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with `defaults`; a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`")
	tls := load(t, "conflicted.yaml")
	apply(t, cl, tls[0])
	expectDenied(t, cl, tls[1], denied+
		`BackendTLSPolicy.gateway.networking.k8s.io "store-tls-2" is invalid: spec.targetRefs[0]: Forbidden: Conflicted: Service e2e-app/store section https already has BackendTLSPolicy e2e-app/store-tls; a Direct policy kind allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)`)
}

func TestWarningAndAnnotations(t *testing.T) {
	cl, w := newClient(t)
	apply(t, cl, load(t, "topology.yaml")...)
	policy := load(t, "warning.yaml")[0]
	require.Equal(t, "<created>", createErr(cl, policy))
	assert.Equal(t, []string{"TargetNotFound: spec.targetRefs[0]: HTTPRoute e2e-app/cart not found; the policy takes effect once it exists"}, w.Take())

	accepted := load(t, "accepted.yaml")[0]
	eventually(t, "the Gateway reaches the webhook", func() error {
		probe := accepted.DeepCopy()
		if err := cl.Create(context.Background(), probe, client.DryRunAll); err != nil {
			return err
		}
		if got := probe.GetAnnotations()["policyattachment.io/impact-summary"]; !strings.Contains(got, "enforced on 2 of 2 paths") {
			return assertionError(got)
		}
		return nil
	})
	require.Equal(t, "<created>", createErr(cl, accepted))
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(accepted.GroupVersionKind())
	require.NoError(t, cl.Get(context.Background(), client.ObjectKeyFromObject(accepted), stored))
	assert.Equal(t, "Atomic defaults on Gateway e2e-infra/gw: enforced on 2 of 2 paths (predicted at admission)", stored.GetAnnotations()["policyattachment.io/impact-summary"])
	var im impact.Impact
	require.NoError(t, json.Unmarshal([]byte(stored.GetAnnotations()["policyattachment.io/impact"]), &im))
	// No observedAt: the prediction rests on no other policy. Its one ancestor, in GEP-5058's
	// shape, is the Gateway it targets, accepted and enforced on both paths.
	gw := impact.ObjectRef{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "e2e-infra", Name: "gw"}
	assert.Equal(t, impact.Impact{Status: impact.StatusEnforced, Contexts: 2, Enforced: 2, Overrides: []string{}, OverriddenBy: []string{},
		Ancestors: []impact.AncestorStatus{{AncestorRef: gw, Accepted: "Accepted", Status: impact.StatusEnforced, Contexts: 2,
			Targets: []impact.TargetStatus{{TargetRef: gw, Accepted: "Accepted", Status: impact.StatusEnforced, Contexts: 2}}}}}, im)

	// A dry-run apply of the unchanged policy, as Flux and Argo CD run it, computes what
	// was stored at CREATE: no drift.
	again := stored.DeepCopy()
	require.NoError(t, cl.Update(context.Background(), again, client.DryRunAll))
	assert.Equal(t, stored.GetAnnotations(), again.GetAnnotations())
}

func TestReferenceGrantAddedThenRemoved(t *testing.T) {
	cl, w := newClient(t)
	apply(t, cl, load(t, "topology.yaml")...)
	grant := load(t, "grant.yaml")[0]
	policy := load(t, "ref-not-permitted.yaml")[0]
	apply(t, cl, grant)
	eventually(t, "the grant admits the policy", func() error {
		if got := createErr(cl, policy); got != "<created>" {
			return assertionError(got)
		}
		return nil
	})
	w.Take()
	eventually(t, "deleting the grant warns", func() error {
		if err := cl.Delete(context.Background(), grant.DeepCopy(), client.DryRunAll); err != nil {
			return err
		}
		if got := w.Take(); len(got) != 1 {
			return assertionError(strings.Join(got, "; "))
		}
		return nil
	})
	require.NoError(t, cl.Delete(context.Background(), grant.DeepCopy()))
	assert.Equal(t, []string{"DeleteImpact: deleting ReferenceGrant e2e-infra/app-colors withdraws the cross-namespace reference 1 accepted policy relies on: a ColorPolicy in namespace \"e2e-app\"; controllers may stop enforcing it and the next update of it will be denied"}, w.Take())

	// Without the grant, the policy's next update is denied.
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(policy.GroupVersionKind())
	const wantUpdate = denied + `ColorPolicy.policies.controller.io "cross-ns" is invalid: spec.targetRefs[0].namespace: Forbidden: RefNotPermitted: no ReferenceGrant in namespace "e2e-infra" lets ColorPolicy from namespace "e2e-app" reference Gateway "gw"`
	eventually(t, "the update is denied once the grant is gone", func() error {
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(policy), stored); err != nil {
			return err
		}
		stored.SetLabels(map[string]string{"touched": time.Now().Format("150405.000000")})
		if got := createErrText(cl.Update(context.Background(), stored, client.DryRunAll)); got != wantUpdate {
			return assertionError(got)
		}
		return nil
	})
	require.NoError(t, cl.Delete(context.Background(), stored))
	assert.Equal(t, []string{"DeleteImpact: deleting ColorPolicy e2e-app/cross-ns removes atomic overrides from 1 path in 1 namespace; it is enforced on 1 of them"}, w.Take())
}

func TestExcludedNamespace(t *testing.T) {
	cl, _ := newClient(t)
	assert.Equal(t, "<created>", createErr(cl, load(t, "excluded-namespace.yaml")[0]), "policyattachment-system is never reviewed")
}

func TestPolicyCRDInstalledWhileRunning(t *testing.T) {
	cl, _ := newClient(t)
	apply(t, cl, load(t, "retrypolicy-crd.yaml")...)
	// An operator adds the new kind to the webhook configuration's resources.
	addToWebhook(t, cl, "e2e.example.com", "retrypolicies")
	retry := func(name string, retries int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "e2e.example.com/v1", "kind": "RetryPolicy",
			"metadata": map[string]any{"name": name, "namespace": "e2e-app"},
			"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "store"}}, "retries": retries},
		}}
		return u
	}
	eventually(t, "the first RetryPolicy", func() error {
		if got := createErr(cl, retry("first", 3)); got != "<created>" && !strings.Contains(got, "already exists") {
			return assertionError(got)
		}
		return nil
	})
	// A kind known only from its CRD's label is judged by value, whatever the label says.
	expectDenied(t, cl, retry("second", 5), denied+
		`RetryPolicy.e2e.example.com "second" is invalid: spec.retries: Forbidden: Conflicted: RetryPolicy e2e-app/first on Service e2e-app/store also sets defaults "retries" to 3 (this policy: 5); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`)
	assert.Equal(t, "<created>", createErr(cl, retry("same", 3), client.DryRunAll), "the same value is no conflict")
}

// TestWebhookDown: with the webhook down, validation (Fail) rejects policy writes with the
// API server's message, everything else is unaffected, and it recovers when it returns.
func TestWebhookDown(t *testing.T) {
	cl, _ := newClient(t)
	policy := load(t, "warning.yaml")[0]
	policy.SetName("while-down")
	webhook(t, "stop")
	defer webhook(t, "start")
	got := createErr(cl, policy)
	// The rest of the API server's message names the address it dialled, which differs
	// between the local harness and a cluster.
	assert.True(t, strings.HasPrefix(got, `Internal error occurred: failed calling webhook "validate.policyattachment.io": failed to call webhook: `), got)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "unaffected", "namespace": "e2e-app"}}}
	assert.Equal(t, "<created>", createErr(cl, cm), "objects outside the rules are unaffected")

	// The emergency command of the README: remove the validating configuration. Writes go
	// through; the mutating webhook fails open, so no annotations are added.
	ctx := context.Background()
	validating := &unstructured.Unstructured{}
	validating.SetAPIVersion("admissionregistration.k8s.io/v1")
	validating.SetKind("ValidatingWebhookConfiguration")
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "policyattachment"}, validating))
	require.NoError(t, cl.Delete(ctx, validating.DeepCopy()))
	unannotated := policy.DeepCopy()
	unannotated.SetName("while-down-unvalidated")
	// The API server learns of the deletion from its own watch, a moment later: until then
	// it still calls the stopped webhook and refuses the write.
	eventually(t, "mutation fails open (Ignore)", func() error {
		if got := createErr(cl, unannotated); got != "<created>" {
			return assertionError(got)
		}
		return nil
	})
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(unannotated.GroupVersionKind())
	require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(unannotated), stored))
	assert.Empty(t, stored.GetAnnotations()["policyattachment.io/impact"])
	// What slips through meanwhile: a policy conflicting with an older one.
	apply(t, cl, load(t, "accepted.yaml")...)
	conflicting := load(t, "accepted.yaml")[0]
	conflicting.SetName("while-down-conflicting")
	require.NoError(t, unstructured.SetNestedField(conflicting.Object, "blue", "spec", "color"))
	require.Equal(t, "<created>", createErr(cl, conflicting))
	defer func() { _ = cl.Delete(ctx, conflicting) }()
	validating.SetResourceVersion("")
	validating.SetUID("")
	require.NoError(t, cl.Create(ctx, validating))

	webhook(t, "start")
	eventually(t, "recovery", func() error {
		if got := createErr(cl, policy); got != "<created>" {
			return assertionError(got)
		}
		return nil
	})

	// The README's way to find what was admitted while the webhook was away: `webhook
	// audit` reads the cluster and replays its policies oldest first.
	table := kinds.BuiltinKindTable()
	docs, err := clusterstate.ReadCluster(ctx, cfg, table, io.Discard)
	require.NoError(t, err)
	report, err := check.Audit(docs, table, nil)
	require.NoError(t, err)
	var found []check.Denial
	for _, f := range report.Findings {
		if f.Namespace == "e2e-infra" && f.Name == "while-down-conflicting" {
			found = f.Denials
		}
		assert.NotEqual(t, "while-down-unvalidated", f.Name, "a valid policy admitted while down is no finding")
	}
	assert.Equal(t, []check.Denial{{Reason: "Conflicted", Field: "spec", Mode: "Deny",
		Message: `Forbidden: Conflicted: ColorPolicy e2e-infra/gw-defaults on Gateway e2e-infra/gw also sets atomic defaults to {"color":"red"} (this policy: {"color":"blue"}); ` +
			"at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level"}}, found)
}

func TestKubeSystemIsNeverReviewed(t *testing.T) {
	cl, _ := newClient(t)
	bad := load(t, "excluded-namespace.yaml")[0]
	bad.SetNamespace("kube-system")
	assert.Equal(t, "<created>", createErr(cl, bad))
}

func addToWebhook(t *testing.T, cl client.Client, group, resource string) {
	t.Helper()
	cfgObj := &unstructured.Unstructured{}
	cfgObj.SetAPIVersion("admissionregistration.k8s.io/v1")
	cfgObj.SetKind("ValidatingWebhookConfiguration")
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Name: "policyattachment"}, cfgObj))
	hooks, _, _ := unstructured.NestedSlice(cfgObj.Object, "webhooks")
	rule := hooks[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
	rule["apiGroups"] = append(rule["apiGroups"].([]any), group)
	rule["resources"] = append(rule["resources"].([]any), resource)
	require.NoError(t, unstructured.SetNestedSlice(cfgObj.Object, hooks, "webhooks"))
	require.NoError(t, cl.Update(context.Background(), cfgObj))
}

type assertionError string

func (e assertionError) Error() string { return "got " + string(e) }

func createErrText(err error) string {
	if err == nil {
		return "<allowed>"
	}
	return err.Error()
}
