package check

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// NotChecked is a policy kind whose policies were judged by the rules alone: no
// CustomResourceDefinition of it was among the manifests (or, with --cluster, in the
// cluster), so what the API server does first with its CRD (schema, CEL rules, defaults)
// was not done, and an ALLOWED policy of it may still be refused by the API server.
type NotChecked struct {
	// Kind is group/Kind, as in builtin_kinds.yaml's rows and the CRD's spec.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// notCheckedMessage says what was not done and the two ways to have it done. It reads true
// with --cluster too: the cluster read had no CRD of the kind.
const notCheckedMessage = "no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; " +
	"give its CRD with -f, or use --cluster to read it from a cluster that has it"

// addNotChecked adds gk to list once, in the order the kinds are first judged.
func addNotChecked(list []NotChecked, gk schema.GroupKind) []NotChecked {
	return addOnce(list, gk, notCheckedMessage)
}

// targetlessMessage says why the objects of a kind whose CRD is labelled as a policy kind
// got no verdict (Report.NotJudged).
const targetlessMessage = "its CRD is labelled " + kinds.PolicyLabel + " but no version of its schema has a target field " +
	"(targetRef, targetRefs, targetSelectors): its objects attach to nothing, so none of them is judged"

// addTargetless adds gk to list once, in the order its CRDs are read.
func addTargetless(list []NotChecked, gk schema.GroupKind) []NotChecked {
	return addOnce(list, gk, targetlessMessage)
}

func addOnce(list []NotChecked, gk schema.GroupKind, message string) []NotChecked {
	kind := gk.Kind
	if gk.Group != "" {
		kind = gk.Group + "/" + gk.Kind
	}
	if slices.ContainsFunc(list, func(n NotChecked) bool { return n.Kind == kind }) {
		return list
	}
	return append(list, NotChecked{Kind: kind, Message: message})
}
