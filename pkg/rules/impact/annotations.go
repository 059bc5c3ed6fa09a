package impact

import (
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Annotation keys written on accepted policies (DESIGN.md contract).
const (
	AnnotationImpact        = "policyattachment.io/impact"
	AnnotationImpactSummary = "policyattachment.io/impact-summary"
)

// AnnotatedSummary is the impact-summary annotation: the Summary, marked as what it is, a
// prediction made when the policy was written. Later writes of other policies change the
// truth and not the annotation; `webhook explain` and the audit tell the current state.
// Like ForAnnotation, it names a target only a selector reached in another namespace as msgs
// allows.
func (im Impact) AnnotatedSummary(p *policy.Policy, msgs *validation.Messages) string {
	return im.summary(p, msgs) + " (predicted at admission)"
}

// CurrentSummary is the Summary for p's readers, as AnnotatedSummary but without the mark:
// what a report computed from the policies stored now says.
func (im Impact) CurrentSummary(p *policy.Policy, msgs *validation.Messages) string {
	return im.summary(p, msgs)
}
