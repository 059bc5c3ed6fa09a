package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Rule is one pure check: it reads the policy (and, through the policy, its kind row) and
// looks other objects up in the snapshot by key; it reports every violation it finds, each
// with its stable reason as origin. msgs decides how messages name objects in other
// namespaces (nil: the default).
type Rule func(p *policy.Policy, snap topology.Snapshot, msgs *Messages) field.ErrorList

// Rules are the checks in the order their denials are reported. ValidateTargetRefs is
// first: a list of target references longer than the kind allows is refused whole, and
// nothing after it is judged (see Policy.TooManyTargetRefs).
var Rules = []Rule{
	ValidateTargetRefs,
	ValidateWholeHTTPPorts,
	ValidateReferences,
	ValidateReferenceGrants,
	ValidateMergeStrategies,
	ValidateConflicts,
	ValidatePoliciesPerTarget,
}
