package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/claims"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Validator answers validating admission reviews for every policy kind in the store's table.
type Validator struct {
	Store *clusterstate.Store
	// Live reads from the API server when the store may be behind; nil reads the store only.
	Live client.Reader
	// Claims serializes conflicting writes across replicas (nil: none; one replica only).
	Claims clusterstate.Claims
	// Timeout is the per-review deadline (DefaultReviewTimeout when zero). It must be shorter
	// than the webhook configuration's timeoutSeconds, so that a review that cannot finish is
	// refused in this webhook's words instead of the API server's timeout.
	Timeout time.Duration
}

// DefaultReviewTimeout leaves 2 s of the configurations' 5 s timeoutSeconds for the network
// and the API server.
const DefaultReviewTimeout = 3 * time.Second

var _ admission.Handler = (*Validator)(nil)

// Handle implements controller-runtime's admission.Handler.
func (v *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if err := checkRequest(req); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	// The deadline runs from the moment the review arrives.
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = DefaultReviewTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	if req.Operation == admissionv1.Delete {
		return v.deletion(gk, req)
	}
	if !v.Store.Ready() {
		// Before the caches sync, the store does not know the stored policies: a conflict
		// would go unseen. Refuse rather than guess; the API server reports the message.
		// (DELETE never reaches here: deletions are always allowed.)
		return admission.Errored(http.StatusServiceUnavailable, errNotReady)
	}
	row, ok := v.Store.Row(gk)
	if !ok {
		return admission.Allowed("") // not a policy kind we know: untouched
	}
	rreq, err := decodeRequest(row, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	dryRun := req.DryRun != nil && *req.DryRun
	gvk := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	reviewer := clusterstate.Reviewer{Store: v.Store, Live: v.Live, Claims: v.Claims}
	if v.Claims != nil && !dryRun && req.Operation == admissionv1.Update && unchangedForRules(req) {
		// Others judged meanwhile read the stored version, which says the same; and the API
		// server stores an unchanged object without a watch event that would release a claim.
		// (Only here is the old object decoded: a review that claims nothing never needs it.)
		reviewer.Claims = nil
	}
	verdict, err := reviewer.Review(ctx, gvk, rreq, !dryRun)
	switch {
	case errors.Is(err, clusterstate.ErrDeadline):
		reviewTimeouts.Inc()
		return admission.Errored(http.StatusServiceUnavailable, fmt.Errorf(
			"policy attachment review of %s %s/%s did not finish within %s (--review-timeout): the write was not checked, so it is refused; retry, and if it persists see the webhook's log and policyattachment_live_read_errors_total",
			row.Kind, rreq.Policy.Namespace, rreq.Policy.Name, timeout))
	case claims.IsBusy(err):
		reviewTimeouts.Inc()
		var busy *claims.BusyError
		errors.As(err, &busy)
		return admission.Errored(http.StatusConflict, fmt.Errorf(
			"policy attachment review of %s %s/%s waited for %s %s, being admitted at the same attachment point, which was neither stored nor given up within %s (--review-timeout): the write was not checked, so it is refused; retry",
			row.Kind, rreq.Policy.Namespace, rreq.Policy.Name, row.Kind, busy.Holder, timeout))
	case errors.As(err, new(*ClaimRateError)):
		// Not logged: a flood would flood the log; policyattachment_reviews_refused_total
		// counts them.
		return admission.Errored(http.StatusTooManyRequests, fmt.Errorf(
			"policy attachment review of %s %s/%s: %v; the write was not checked, so it is refused; retry",
			row.Kind, rreq.Policy.Namespace, rreq.Policy.Name, err))
	case err != nil:
		logf.FromContext(ctx).Error(err, "claiming a policy's attachment points failed; refusing the write")
		return admission.Errored(http.StatusServiceUnavailable, fmt.Errorf(
			"policy attachment review of %s %s/%s: %v; the write was not checked, so it is refused",
			row.Kind, rreq.Policy.Namespace, rreq.Policy.Name, err))
	}
	recordRelaxed(rreq.Policy, verdict)
	logVerdict(ctx, req, rreq.Policy, verdict)
	return Response(gk, rreq, verdict)
}

var errNotReady = fmt.Errorf("the policy attachment webhook is starting and has not read the cluster's policies yet, so it cannot judge this write; retry in a few seconds")

// recordRelaxed counts the denials an enforcement mode admitted.
func recordRelaxed(p *policy.Policy, verdict rules.Verdict) {
	for _, r := range verdict.Relaxed {
		relaxedTotal.WithLabelValues(string(r.Mode), validation.ReasonOf(r.Error), p.Row.Kind).Inc()
	}
}

// logVerdict logs, once per review, a write the rules found fault with: denied, or admitted
// by an enforcement mode (for DryRun, nobody else ever sees the finding). Who asked is part
// of the line, as data; metrics never carry it. The denials are worded for the requester,
// so the log reveals no more of other namespaces than the requester was told. A clean
// review logs nothing.
func logVerdict(ctx context.Context, req admission.Request, p *policy.Policy, verdict rules.Verdict) {
	log := logf.FromContext(ctx)
	if (verdict.Allowed() && len(verdict.Relaxed) == 0) || !log.Enabled() {
		return
	}
	msg, found := "denied", verdict.Denials
	var modes []string
	if verdict.Allowed() {
		msg, found = "admitted despite denials, by enforcement mode", make(field.ErrorList, 0, len(verdict.Relaxed))
		for _, r := range verdict.Relaxed {
			found = append(found, r.Error)
			modes = append(modes, string(r.Mode))
		}
	}
	reasons := make([]string, 0, len(found))
	denials := make([]string, 0, len(found))
	for _, e := range found {
		if reason := validation.ReasonOf(e); !slices.Contains(reasons, reason) {
			reasons = append(reasons, reason)
		}
		denials = append(denials, e.Error())
	}
	kv := []any{"uid", req.UID, "operation", req.Operation, "kind", p.Row.Kind, "namespace", p.Namespace, "name", p.Name,
		"user", requestUser(ctx, req).Username, "dryRun", req.DryRun != nil && *req.DryRun, "reasons", reasons}
	if modes != nil {
		kv = append(kv, "modes", modes)
	}
	log.Info(msg, append(kv, "denials", denials)...)
}

// checkRequest rejects a review that carries no request: answering "allowed" to an empty
// review would let a broken client believe its write was checked.
func checkRequest(req admission.Request) error {
	if req.UID == "" || req.Kind.Kind == "" || req.Operation == "" {
		return fmt.Errorf("the AdmissionReview carries no request (uid, kind and operation are required)")
	}
	return nil
}

// deletion allows every DELETE; for a policy, or a ReferenceGrant that accepted policies
// rely on, it warns what the deletion will affect.
func (v *Validator) deletion(gk schema.GroupKind, req admission.Request) admission.Response {
	resp := admission.Allowed("")
	var warning string
	switch {
	case gk == kinds.ReferenceGrant:
		var g gatewayv1.ReferenceGrant
		if err := json.Unmarshal(req.OldObject.Raw, &g); err != nil {
			return resp // an unreadable old object must not block a deletion
		}
		warning = v.Store.GrantDeletionWarning(&g)
	default:
		if _, ok := v.Store.Row(gk); ok {
			warning = v.Store.DeletionWarning(gk, req.Namespace, req.Name)
			if req.DryRun == nil || !*req.DryRun {
				v.Store.MarkDeleting(gk, req.Namespace, req.Name)
			}
		}
	}
	if warning != "" {
		resp.Warnings = []string{warning}
	}
	return resp
}

// unchangedForRules reports an UPDATE that changes none of what the rules read of a policy:
// its spec, labels and annotations.
func unchangedForRules(req admission.Request) bool {
	now, err := objectOf(req.Object)
	if err != nil || now == nil {
		return false
	}
	before, err := objectOf(req.OldObject)
	if err != nil || before == nil {
		return false
	}
	for _, field := range []string{"labels", "annotations"} {
		a, _, _ := unstructured.NestedFieldNoCopy(now, "metadata", field)
		b, _, _ := unstructured.NestedFieldNoCopy(before, "metadata", field)
		if !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return reflect.DeepEqual(now["spec"], before["spec"])
}

// decodeRequest builds the engine's Request from an admission request, decoding each
// object exactly once.
func decodeRequest(row *kinds.KindRow, req admission.Request) (rules.Request, error) {
	out := rules.Request{Operation: rules.Operation(req.Operation)}
	ext := req.Object
	if req.Operation == admissionv1.Delete {
		ext = req.OldObject
	}
	obj, err := objectOf(ext)
	if err != nil {
		return out, fmt.Errorf("decoding %s %s/%s: %w", row.Kind, req.Namespace, req.Name, err)
	}
	if obj == nil {
		return out, fmt.Errorf("the review for %s %s/%s carries no object", row.Kind, req.Namespace, req.Name)
	}
	if err := matchesRequest(obj, req); err != nil {
		return out, err
	}
	out.Policy = policy.NewPolicy(row, obj)
	if out.Policy.Namespace == "" && row.Scope == kinds.Namespaced {
		// The API server names the namespace in the request even when the body omits it.
		out.Policy.Namespace = req.Namespace
	}
	// The old object of an UPDATE is not decoded: no rule compares a policy with its stored
	// version (the snapshot's copy is skipped by name), and decoding it was a third of the
	// decoding of an update.
	return out, nil
}

// matchesRequest refuses an object whose own apiVersion or kind contradicts the review's
// kind (or a resource of another group): the API server never sends one, so it is a forged
// review trying to have one kind judged by another kind's rules.
func matchesRequest(obj map[string]any, req admission.Request) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	switch {
	case kind != "" && kind != req.Kind.Kind,
		apiVersion != "" && (err != nil || gv.Group != req.Kind.Group),
		req.Resource.Resource != "" && req.Resource.Group != req.Kind.Group:
		return fmt.Errorf("the object (%s, kind %s) does not match the review's kind %s.%s and resource %s.%s",
			apiVersion, kind, req.Kind.Kind, req.Kind.Group, req.Resource.Resource, req.Resource.Group)
	}
	return nil
}

// objectOf returns an object of a review as generic JSON, without managedFields (no rule
// reads them): already decoded by the review door, or decoded here from raw JSON.
func objectOf(ext runtime.RawExtension) (map[string]any, error) {
	var obj map[string]any
	if u, ok := ext.Object.(*unstructured.Unstructured); ok {
		obj = u.Object
	} else {
		if len(ext.Raw) == 0 {
			return nil, nil
		}
		if err := utiljson.Unmarshal(ext.Raw, &obj); err != nil { // integers exact, as the door reads them
			return nil, err
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	return obj, nil
}

// AuditReason is the audit annotation a denial carries: the stable reason of its first
// cause. The API server records it in its audit log, prefixed with the webhook's name
// (`validate.policyattachment.io/reason`), and the reviews counter takes its reason label
// from it.
const AuditReason = "reason"

// Response renders a verdict. A denial is apierrors.NewInvalid's status (invalidStatus):
// HTTP 422 with one cause per field, which kubectl prints as
// `<Kind>.<group> "name" is invalid: [field: detail, ...]`.
func Response(gk schema.GroupKind, req rules.Request, v rules.Verdict) admission.Response {
	var resp admission.Response
	if v.Allowed() {
		resp = admission.Allowed("")
	} else {
		status := invalidStatus(gk, req.Policy.Name, capDenials(v.Denials))
		resp = admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status,
			AuditAnnotations: map[string]string{AuditReason: validation.ReasonOf(v.Denials[0])}}}
	}
	resp.Warnings = capWarnings(v.Warnings)
	return resp
}

// MaxDenials bounds the causes of one denial: a kind whose CRD sets no maxItems (Envoy
// Gateway's) may name any number of targets, and a cause for each bad one would make an
// answer that grows with what a requester sent. `webhook check` shows every one.
const MaxDenials = 10

// capDenials keeps the first MaxDenials-1 causes and counts the others in a last one, at
// spec, of the first left-out cause's reason.
func capDenials(errs field.ErrorList) field.ErrorList {
	if len(errs) <= MaxDenials {
		return errs
	}
	reason := validation.ReasonOf(errs[MaxDenials-1])
	more := field.Forbidden(field.NewPath("spec"), fmt.Sprintf("%s: %d more problems not shown; `webhook check -f` on the manifest lists them all", reason, len(errs)-(MaxDenials-1)))
	more.Origin = reason
	return append(errs[:MaxDenials-1:MaxDenials-1], more)
}

// MaxWarnings bounds the warnings of one answer: the API server returns each as an HTTP
// header, and kubectl prints them all. `webhook check` shows every one.
const MaxWarnings = 10

func capWarnings(warnings []string) []string {
	if len(warnings) <= MaxWarnings {
		return warnings
	}
	out := append([]string(nil), warnings[:MaxWarnings-1]...)
	return append(out, fmt.Sprintf("%d more warnings not shown; `webhook check -f` on the manifest lists them all", len(warnings)-(MaxWarnings-1)))
}
