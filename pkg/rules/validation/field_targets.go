package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// validateFieldTargets applies the row's FieldTargets: a policy that sets one of the fields
// may target only the kinds its entry lists, by reference and by selector alike, as the
// kind's CRD rule says (kgateway's TrafficPolicy: "autoHostRewrite can only be used when
// targeting HTTPRoute resources"). The API server applies that rule where the CRD is
// installed; `check` without the CRD has only the row. One error per field, on the field,
// naming the first target outside the list.
func validateFieldTargets(p *policy.Policy, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, ft := range p.Row.FieldTargets {
		if !specHas(p.Spec(), ft.Field) {
			continue
		}
		if k, outside := targetOutside(p, ft.TargetKinds); outside {
			path := spec
			for _, seg := range strings.Split(ft.Field, ".") {
				path = path.Child(seg)
			}
			errs = append(errs, field.Forbidden(path, fmt.Sprintf(
				"may be set only when every target is one of %s; this policy targets a %s", strings.Join(ft.TargetKinds, ", "), policy.Echo(k))))
		}
	}
	return errs
}

// specHas reports whether the dotted path is set, to anything but null, in spec.
func specHas(spec map[string]any, path string) bool {
	var v any = spec
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[seg]; !ok {
			return false
		}
	}
	return v != nil
}
