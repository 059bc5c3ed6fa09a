package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Operation is the admission operation being judged.
type Operation string

const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Request is one policy write to judge.
type Request struct {
	Operation Operation
	// Policy is the new object (CREATE, UPDATE) or the object being deleted (DELETE).
	Policy *Policy
	// OldPolicy is the stored version on UPDATE; the snapshot may still hold it, and the
	// rules never compare a policy with an older version of itself.
	OldPolicy *Policy
	// Settings decide how each denial is enforced and how messages name other objects;
	// nil means the defaults (every denial denies, names stay in their namespace).
	Settings *Settings
}

// Verdict is the engine's answer: denials (field errors whose detail starts with a
// reason) and warnings. An empty Denials list means the write is allowed.
type Verdict struct {
	Denials  field.ErrorList
	Warnings []string
	// Relaxed are the denials the enforcement settings let through (Warn, DryRun); a Warn
	// denial is also among Warnings.
	Relaxed []Relaxed
}

// Relaxed is a denial that its enforcement mode admitted.
type Relaxed struct {
	Mode  Mode
	Error *field.Error
}

// Allowed reports whether the verdict admits the write.
func (v Verdict) Allowed() bool { return len(v.Denials) == 0 }

// rule is one pure check. Every rule sees the whole request and the snapshot and reports
// all its violations; the engine never stops at the first.
type rule func(req *Request, snap Snapshot) (field.ErrorList, []string)

// ruleSet is the ordered list of checks; denials come out in this order.
var ruleSet = []rule{
	validateTargetRefs,
	validateReferences,
	validateReferenceGrants,
	validateMergeStrategies,
	validateConflicts,
	warnMissingTargets,
}

// Evaluate judges a request against a snapshot.
func Evaluate(req Request, snap Snapshot) Verdict {
	var v Verdict
	if req.Operation == Delete || req.Policy == nil {
		return v
	}
	var found field.ErrorList
	for _, r := range ruleSet {
		errs, warnings := r(&req, snap)
		found = append(found, errs...)
		v.Warnings = append(v.Warnings, warnings...)
		if req.Policy.TooManyTargetRefs() {
			break // validateTargetRefs, first, refused the list whole; nothing else to judge
		}
	}
	if len(found) == 0 {
		return v
	}
	var nsLabels map[string]string
	for _, e := range found {
		mode := Deny
		if req.Settings != nil {
			if nsLabels == nil {
				nsLabels = NamespaceLabels(snap, req.Policy.Namespace)
			}
			mode = req.Settings.ModeFor(ReasonOf(e), req.Policy, nsLabels)
		}
		switch mode {
		case Warn:
			v.Relaxed = append(v.Relaxed, Relaxed{Mode: Warn, Error: e})
			v.Warnings = append(v.Warnings, WarnModeWarning(e))
		case DryRun:
			v.Relaxed = append(v.Relaxed, Relaxed{Mode: DryRun, Error: e})
		default:
			v.Denials = append(v.Denials, e)
		}
	}
	return v
}

// WarnModeWarning is the warning kubectl prints for a denial enforced in Warn mode: the
// denial as it would read, and why the write went through.
func WarnModeWarning(e *field.Error) string {
	return fmt.Sprintf("%s (admitted: enforcement mode is Warn)", e.Error())
}

// NamespaceLabels returns the labels of a namespace as the snapshot knows them, always
// including kubernetes.io/metadata.name (the API server sets it on every namespace).
func NamespaceLabels(snap Snapshot, namespace string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": namespace}
	if obj, ok := snap.Object(TargetKey{Group: CoreGroup, Kind: "Namespace", Name: namespace}); ok {
		for k, v := range obj.Labels {
			out[k] = v
		}
	}
	return out
}
