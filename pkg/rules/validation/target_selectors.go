package validation

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// selectorNamespaces are the values of targetSelectors[].namespaces.from (Envoy Gateway's
// TargetSelector; a selector without namespaces selects in the policy's own namespace).
var selectorNamespaces = []string{"Same", "All", "Selector"}

// validateTargetSelectors checks spec.targetSelectors (part of InvalidTargetRef): each a
// label selector of one kind the policy kind may target, whose group defaults to Gateway
// API's, with a valid label selector and, when given, a valid namespaces selection.
func validateTargetSelectors(p *policy.Policy, fldPath *field.Path) field.ErrorList {
	raw, ok := p.Spec()["targetSelectors"]
	if !ok || raw == nil {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		return field.ErrorList{field.Invalid(fldPath, policy.DescribeValue(raw), "must be a list of target selectors")}
	}
	var errs field.ErrorList
	for i, item := range list {
		errs = append(errs, validateTargetSelector(p.Row, item, fldPath.Index(i))...)
	}
	return errs
}

func validateTargetSelector(row *kinds.KindRow, item any, fldPath *field.Path) field.ErrorList {
	m, ok := item.(map[string]any)
	if !ok {
		return field.ErrorList{field.Invalid(fldPath, policy.DescribeValue(item), "must be an object with `kind` and `matchLabels` or `matchExpressions`")}
	}
	var errs field.ErrorList
	group := kinds.GatewayGroup
	if g, ok := m["group"].(string); ok {
		group = g
	}
	kind, _ := m["kind"].(string)
	switch {
	case kind == "":
		errs = append(errs, field.Required(fldPath.Child("kind"), ""))
	case !kindPattern.MatchString(kind) || !groupPattern.MatchString(group):
		errs = append(errs, field.Invalid(fldPath.Child("kind"), kinds.QualifiedKind(group, kind), "must be a group and kind, for example `gateway.networking.k8s.io` and `HTTPRoute`"))
	default:
		if _, ok := row.Target(group, kind); !ok {
			errs = append(errs, unsupportedTarget(row, policy.TargetRef{Group: group, Kind: kind, Path: fldPath}))
		}
	}
	var sel metav1.LabelSelector
	labelsPart := map[string]any{"matchLabels": m["matchLabels"], "matchExpressions": m["matchExpressions"]}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(labelsPart, &sel); err != nil {
		errs = append(errs, field.Invalid(fldPath, "<object>", "`matchLabels` must map strings to strings and `matchExpressions` list `key`, `operator` and `values`"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(&sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)...)
	}
	if ns, ok := m["namespaces"].(map[string]any); ok {
		from, _ := ns["from"].(string)
		switch {
		case from == "":
			errs = append(errs, field.Required(fldPath.Child("namespaces", "from"), "one of Same, All, Selector"))
		case !slices.Contains(selectorNamespaces, from):
			errs = append(errs, field.NotSupported(fldPath.Child("namespaces", "from"), from, selectorNamespaces))
		case from == "Selector" && ns["selector"] == nil:
			errs = append(errs, field.Required(fldPath.Child("namespaces", "selector"), "required when `from` is Selector"))
		}
	}
	return errs
}
