package validation

import (
	"fmt"
	"slices"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WarningNamespaceIgnored: a reference names another namespace, which the implementation
// does not read: it looks the referent up in the policy's own namespace (Envoy AI Gateway's
// BackendSecurityPolicy API key Secrets). The policy is accepted, so it is admitted; the
// warning says which object it will really use.
const WarningNamespaceIgnored = "NamespaceIgnored"

// WarnNamespaceIgnored warns, never denies, about each reference whose row says its
// implementation ignores the namespace, where that namespace is another than the policy's.
func WarnNamespaceIgnored(p *policy.Policy) []string {
	if !slices.ContainsFunc(p.Row.References, func(r kinds.Reference) bool { return r.CrossNamespace == kinds.CrossNamespaceIgnored }) {
		return nil // no decoding of references on a review that cannot warn about one
	}
	var warnings []string
	refs, _ := p.ObjectRefs()
	for _, ref := range refs {
		if ref.Spec.CrossNamespace != kinds.CrossNamespaceIgnored || !ref.HasNamespace || ref.Namespace == p.Namespace || ref.Name == "" {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s: %s does not read the namespace of this reference: it uses %s %q in the policy's own namespace %q, not in %q",
			WarningNamespaceIgnored, ref.Path.Child("namespace"), p.Row.Kind, policy.Echo(ref.Kind), policy.Echo(ref.Name), p.Namespace, policy.Echo(ref.Namespace)))
	}
	return warnings
}
