package kindsdrift

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// policyCondition matches a Go constant of Gateway API's policy condition types and reasons,
// as implementations declare theirs: `PolicyConditionOverridden gwapiv1.PolicyConditionType
// = "Overridden"`, `PolicyReasonTargetNotFound PolicyConditionReason = "TargetNotFound"`.
var policyCondition = regexp.MustCompile(`(?m)^\s*\w+\s+(?:\w+\.)?PolicyCondition(Type|Reason)\s*=\s*"([^"]+)"`)

// PolicyConditions reads the policy condition types and reasons declared as constants in the
// Go files (tests left out) of the folders dirs under a module's root, so the conditions a
// kind row's statusConditions read can be checked against what the implementation defines.
func PolicyConditions(root string, dirs ...string) (types, reasons map[string]bool, err error) {
	types, reasons = map[string]bool{}, map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, err
			}
			for _, m := range policyCondition.FindAllStringSubmatch(string(src), -1) {
				if m[1] == "Type" {
					types[m[2]] = true
				} else {
					reasons[m[2]] = true
				}
			}
		}
	}
	return types, reasons, nil
}
