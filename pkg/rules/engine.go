package rules

import (
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
}

// Verdict is the engine's answer: denials (field errors whose detail starts with a
// reason) and warnings. An empty Denials list means the write is allowed.
type Verdict struct {
	Denials  field.ErrorList
	Warnings []string
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
	for _, r := range ruleSet {
		errs, warnings := r(&req, snap)
		v.Denials = append(v.Denials, errs...)
		v.Warnings = append(v.Warnings, warnings...)
	}
	return v
}
