package validation

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// WarningFieldIgnored: the policy sets a field its kind's CRD does not have, which the
// implementation never reads (the API server prunes it in a cluster; `webhook check` reads
// the file as written). It is ignored here too, never a denial.
const WarningFieldIgnored = "FieldIgnored"

// warnSelectorSectionIgnored warns about a target selector's sectionName on a kind whose
// selectors have none (Envoy Gateway's TargetSelector): the selector selects whole objects.
func warnSelectorSectionIgnored(p *policy.Policy, sel *policy.TargetSelector) (string, bool) {
	if !sel.SectionNameIgnored {
		return "", false
	}
	return fmt.Sprintf("%s: %s: ignored: %s's targetSelectors have no sectionName, so the selector targets each selected %s whole",
		WarningFieldIgnored, sel.Path.Child("sectionName"), p.Row.Kind, policy.Echo(sel.Kind)), true
}
