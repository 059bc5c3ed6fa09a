package validation

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WarningNotFromThisNamespace: the implementation applies a policy on this target only from
// another namespace (the row's onlyFromNamespace); from the policy's own it is ignored.
const WarningNotFromThisNamespace = "NotFromThisNamespace"

// warnOnlyFromNamespace warns, never denies, when a reference names a target the
// implementation acts on only from another namespace than the policy's: that namespace is
// the implementation's configuration (Istio's root namespace), which the webhook cannot read.
func warnOnlyFromNamespace(p *policy.Policy, ref policy.TargetRef, target kinds.TargetKind) (string, bool) {
	only := target.OnlyFromNamespace
	if only == nil || only.Namespace == p.Namespace {
		return "", false
	}
	unless := ""
	if only.Configurable != "" {
		unless = fmt.Sprintf(" (unless %s names another)", only.Configurable)
	}
	return fmt.Sprintf("%s: %s: %s takes effect on a %s only from namespace %q%s; from namespace %q it is ignored",
		WarningNotFromThisNamespace, ref.Path, p.Row.Kind, ref.Kind, only.Namespace, unless, p.Namespace), true
}
