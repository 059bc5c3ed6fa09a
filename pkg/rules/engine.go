package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
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
	Policy *policy.Policy
	// OldPolicy is the stored version on UPDATE; the snapshot may still hold it, and the
	// rules never compare a policy with an older version of itself.
	OldPolicy *policy.Policy
	// Config decides how each denial is enforced and how messages name other objects;
	// nil means the defaults (every denial denies, names stay in their namespace).
	Config *Config
}

// Verdict is the engine's answer: denials (field errors whose origin is their stable
// reason, which also opens their detail) and warnings. An empty Denials list means the
// write is allowed.
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

// MissingTargetWarnings are the warnings Evaluate gives a policy for targets, sections and
// selections that are not there (yet), and for targets reached through Gateways no
// controller of its kind serves: none for a refs list refused whole.
func MissingTargetWarnings(p *policy.Policy, snap topology.Snapshot) []string {
	if p.TooManyTargetRefs() {
		return nil
	}
	return append(validation.WarnMissingTargets(p, snap), validation.WarnNotServed(p, snap)...)
}

// Evaluate judges a request against a snapshot.
func Evaluate(req Request, snap topology.Snapshot) Verdict {
	var v Verdict
	if req.Operation == Delete || req.Policy == nil {
		return v
	}
	msgs := req.Config.MessagesOrNil()
	var found field.ErrorList
	for _, r := range validation.Rules {
		found = append(found, r(req.Policy, snap, msgs)...)
		if req.Policy.TooManyTargetRefs() {
			break // ValidateTargetRefs, first, refused the list whole; nothing else to judge
		}
	}
	if !req.Policy.TooManyTargetRefs() {
		v.Warnings = append(MissingTargetWarnings(req.Policy, snap), validation.WarnImplementationSpecific(req.Policy)...)
		v.Warnings = append(v.Warnings, validation.WarnNamespaceIgnored(req.Policy)...)
		v.Warnings = append(v.Warnings, validation.WarnCRDDrift(req.Policy)...)
	}
	if len(found) == 0 {
		return v
	}
	var nsLabels map[string]string
	for _, e := range found {
		mode := Deny
		if req.Config != nil {
			if nsLabels == nil {
				nsLabels = topology.NamespaceLabels(snap, req.Policy.Namespace)
			}
			mode = req.Config.ModeFor(validation.ReasonOf(e), req.Policy, nsLabels)
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
