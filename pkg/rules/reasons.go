package rules

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Stable reasons (DESIGN.md contract). Each denial's detail starts with one of them, so
// people and scripts can read it in kubectl's output.
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
)

var reasons = []string{ReasonInvalidTargetRef, ReasonRefNotPermitted, ReasonMultipleMergeStrategies, ReasonConflicted}

// withReason puts reason at the front of each error's detail.
func withReason(reason string, errs ...*field.Error) field.ErrorList {
	for _, e := range errs {
		if e.Detail == "" {
			e.Detail = reason
		} else {
			e.Detail = reason + ": " + e.Detail
		}
	}
	return errs
}

// ReasonOf returns the stable reason at the front of an error's detail.
func ReasonOf(e *field.Error) string {
	for _, r := range reasons {
		if e.Detail == r || strings.HasPrefix(e.Detail, r+": ") {
			return r
		}
	}
	return ""
}

// ReasonIn finds the stable reason inside a rendered cause, as the API server returns it
// ("Unsupported value: \"Service\": InvalidTargetRef: supported values: ..."), or "".
func ReasonIn(cause string) string {
	for _, r := range reasons {
		if strings.HasPrefix(cause, r+": ") || strings.Contains(cause, ": "+r+": ") || strings.HasSuffix(cause, ": "+r) || cause == r {
			return r
		}
	}
	return ""
}
