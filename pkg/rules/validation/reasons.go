package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Stable reasons (DESIGN.md contract). Each denial carries its reason in field.Error.Origin,
// where code reads it, and at the front of its detail, where people and scripts read it in
// kubectl's output.
const (
	ReasonInvalidTargetRef        = "InvalidTargetRef"
	ReasonRefNotPermitted         = "RefNotPermitted"
	ReasonMultipleMergeStrategies = "MultipleMergeStrategies"
	ReasonConflicted              = "Conflicted"
)

// Warning reasons: problems that are only "not yet", never denials.
const (
	WarningTargetNotFound  = "TargetNotFound"
	WarningSectionNotFound = "SectionNotFound"
	// WarningSelectsNothing: a target selector selects no object now.
	WarningSelectsNothing = "SelectsNothing"
	// WarningSelectionNotPermitted: a target selector selects objects in other namespaces
	// that no ReferenceGrant lets the policy reference; the implementation ignores them.
	WarningSelectionNotPermitted = "SelectionNotPermitted"
	// WarningListenerConflicted: a sectionName names a listener that loses a listener
	// conflict (Gateway API's Conflicted listener, not Accepted): the policy takes effect
	// nowhere through it until the conflict is gone.
	WarningListenerConflicted = "ListenerConflicted"
)

// Reasons lists the stable reasons, in the order the rules report them.
var Reasons = []string{ReasonInvalidTargetRef, ReasonRefNotPermitted, ReasonMultipleMergeStrategies, ReasonConflicted}

// IsReason reports whether r is a stable reason.
func IsReason(r string) bool { return slices.Contains(Reasons, r) }

// withReason sets reason as each error's origin and puts it at the front of its detail.
// Every rule's errors pass here, so here a string value the error repeats (field.Invalid's,
// NotSupported's, Duplicate's, and those of apimachinery's validators) is bounded as
// messages repeat what a requester wrote (policy.Echo).
func withReason(reason string, errs ...*field.Error) field.ErrorList {
	for _, e := range errs {
		if s, ok := e.BadValue.(string); ok {
			e.BadValue = policy.Echo(s)
		}
		e.Origin = reason
		if e.Detail == "" {
			e.Detail = reason
		} else {
			e.Detail = reason + ": " + e.Detail
		}
	}
	return errs
}

// ReasonOf returns the stable reason of a denial: its origin.
func ReasonOf(e *field.Error) string { return e.Origin }
