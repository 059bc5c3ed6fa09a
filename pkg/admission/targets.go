package admission

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// TargetGuard reviews the deletion of a Gateway, a ListenerSet, an xRoute (and a Service,
// when the config asks): it admits it with a warning that says, in the deleter's terms,
// which policies it leaves applying nowhere and what applies instead where the effective
// policy changes (impact.TargetDeletionOf), or refuses it where the config's targetDeletions
// mode is Deny. Its webhook fails open (failurePolicy Ignore): an outage never blocks a
// cleanup, so neither does a store that has not synced yet (admitted unreviewed).
type TargetGuard struct {
	Store *clusterstate.Store
}

var _ admission.Handler = (*TargetGuard)(nil)

// Handle implements controller-runtime's admission.Handler.
func (g *TargetGuard) Handle(ctx context.Context, req admission.Request) admission.Response {
	if err := checkRequest(req); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation != admissionv1.Delete || !g.Store.Ready() {
		return admission.Allowed("")
	}
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	v := g.Store.TargetDeletion(gk, req.Namespace, req.Name, requestUser(ctx, req).Username)
	if !v.Reviewed || (len(v.Warnings) == 0 && v.Refusal == "") {
		return admission.Allowed("")
	}
	switch v.Mode {
	case rules.Deny:
		logTargetDeletion(ctx, req, "refused", v)
		resp := admission.Denied(v.Refusal)
		resp.Result.Code = http.StatusForbidden
		resp.Result.Reason = metav1.StatusReasonForbidden
		resp.AuditAnnotations = map[string]string{AuditReason: impact.ReasonTargetInUse}
		return resp
	case rules.DryRun:
		logTargetDeletion(ctx, req, "admitted silently, by enforcement mode DryRun", v)
		return admission.Allowed("")
	}
	resp := admission.Allowed("")
	resp.Warnings = capWarnings(v.Warnings)
	return resp
}

// logTargetDeletion logs a deletion refused or admitted silently (DryRun, which nobody else
// sees), worded as the deleter is told.
func logTargetDeletion(ctx context.Context, req admission.Request, msg string, v clusterstate.TargetDeletionVerdict) {
	log := logf.FromContext(ctx)
	if !log.Enabled() {
		return
	}
	log.Info("target deletion "+msg, "uid", req.UID, "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name,
		"user", requestUser(ctx, req).Username, "dryRun", req.DryRun != nil && *req.DryRun, "reasons", []string{impact.ReasonTargetInUse},
		"policies", v.Policies, "findings", v.Warnings)
}
