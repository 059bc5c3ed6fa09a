package admission

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/rules"
)

// SkipLabel is the namespace label that both webhook configurations' namespaceSelector
// excludes: with the value skip, policies in that namespace are not reviewed.
const SkipLabel = "policyattachment.io/webhook"

// SkipVerb is the RBAC verb, on the resource namespaces in API group policyattachment.io,
// that lets a requester add, change or remove SkipLabel. The webhook configuration's
// matchConditions ask the API server's authorizer for it, so those who hold it never reach
// NamespaceGuard, even while the webhook is down.
const SkipVerb = "skip"

// NamespaceGuard reviews the namespace writes that add, change or remove SkipLabel and that
// the API server's authorizer did not already allow: it admits those whom the config's
// skipLabel list names and denies the rest. Without it, whoever may label their own
// namespace could switch policy review off for it.
type NamespaceGuard struct {
	Allowed rules.SkipLabelGuard
}

var _ admission.Handler = (*NamespaceGuard)(nil)

// Handle implements controller-runtime's admission.Handler.
func (g *NamespaceGuard) Handle(ctx context.Context, req admission.Request) admission.Response {
	if err := checkRequest(req); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Kind.Group != "" || req.Kind.Kind != "Namespace" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	now, err := skipLabelOf(req.Object)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding namespace %q: %w", req.Name, err))
	}
	var before *string
	if req.Operation == admissionv1.Update {
		if before, err = skipLabelOf(req.OldObject); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding namespace %q: %w", req.Name, err))
		}
	}
	if equalLabel(before, now) {
		return admission.Allowed("")
	}
	user := requestUser(ctx, req)
	if g.Allowed.Allows(user.Username, user.Groups) {
		return admission.Allowed("")
	}
	logf.FromContext(ctx).Info("denied", "uid", req.UID, "operation", req.Operation, "kind", "Namespace", "name", req.Name,
		"user", user.Username, "reasons", []string{"SkipLabelGuarded"})
	resp := admission.Denied(fmt.Sprintf(
		"the label %s turns policy attachment review off in namespace %q, so %s may not %s it: that takes the verb %q on namespaces in API group policyattachment.io (RBAC), or a place in the webhook config's skipLabel list",
		SkipLabel, req.Name, requester(user.Username), change(before, now), SkipVerb))
	resp.Result.Code = http.StatusForbidden
	resp.Result.Reason = metav1.StatusReasonForbidden
	return resp
}

// skipLabelOf returns the namespace's SkipLabel value, nil when it has none (or there is no
// object).
func skipLabelOf(ext runtime.RawExtension) (*string, error) {
	obj, err := objectOf(ext)
	if err != nil {
		return nil, err
	}
	labels, _, err := unstructured.NestedStringMap(obj, "metadata", "labels")
	if err != nil {
		return nil, err
	}
	if v, ok := labels[SkipLabel]; ok {
		return &v, nil
	}
	return nil, nil
}

func equalLabel(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func change(before, now *string) string {
	switch {
	case before == nil:
		return "add"
	case now == nil:
		return "remove"
	default:
		return "change"
	}
}

func requester(username string) string {
	if username == "" {
		return "an anonymous requester"
	}
	return fmt.Sprintf("user %q", username)
}
