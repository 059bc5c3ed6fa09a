package validation

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidateMergeStrategies enforces GEP-713 Standard "Basic merge strategies": an instance
// MUST NOT declare more than one merge strategy. Bare rules (implicit atomic defaults, per
// the Kuadrant RFC), `defaults` and `overrides` are three strategies; so are two different
// `strategy` values; and a value the kind does not support is no strategy at all.
func ValidateMergeStrategies(p *policy.Policy, _ topology.Snapshot, _ *Messages) field.ErrorList {
	row := p.Row
	spec := field.NewPath("spec")
	var errs field.ErrorList

	blocks := p.Blocks()
	if len(blocks) > 1 && !row.Stanzas.AllowDefaultsWithOverrides {
		first := blocks[0]
		for _, b := range blocks[1:] {
			errs = append(errs, field.Forbidden(b.Path, fmt.Sprintf(
				"may not be set together with %s; a policy declares one merge strategy: use one of %s",
				blockName(p, first), strategyChoices(row))))
		}
	}

	if f := row.Strategy.Field; f != "" {
		fields := p.Spec()
		specValue, specSet := fields[f]
		if specSet {
			errs = append(errs, validateStrategyValue(row, specValue, spec.Child(f))...)
			errs = append(errs, validateStrategyTargets(p, spec.Child(f))...)
		}
		for _, b := range blocks {
			if b.Bare() {
				continue
			}
			raw, _ := fields[b.Field].(map[string]any)
			v, ok := raw[f]
			if !ok {
				continue
			}
			path := b.Path.Child(f)
			errs = append(errs, validateStrategyValue(row, v, path)...)
			if specSet && !reflect.DeepEqual(v, specValue) {
				errs = append(errs, field.Forbidden(path, fmt.Sprintf(
					"%v conflicts with `spec.%s` %v; declare the strategy once", policy.DescribeValue(v), f, policy.DescribeValue(specValue))))
			}
		}
	}
	return withReason(ReasonMultipleMergeStrategies, errs...)
}

func validateStrategyValue(row *kinds.KindRow, v any, path *field.Path) field.ErrorList {
	s, ok := v.(string)
	if !ok {
		return field.ErrorList{field.Invalid(path, policy.DescribeValue(v), fmt.Sprintf("must be a string, one of %s", quoteAll(row.StrategyValues())))}
	}
	if _, ok := row.Strategy.Values[s]; !ok {
		return field.ErrorList{field.NotSupported(path, s, row.StrategyValues())}
	}
	return nil
}

// blockName names a block for a message: "`defaults`" or "bare rules (`color`)".
func blockName(p *policy.Policy, b policy.Block) string {
	if !b.Bare() {
		return "`" + b.Field + "`"
	}
	keys := make([]string, 0, len(b.Body))
	for k := range b.Body {
		keys = append(keys, "`"+k+"`")
	}
	sort.Strings(keys)
	return "bare rules (" + strings.Join(keys, ", ") + ")"
}

// strategyChoices lists what one instance may declare, from the row.
func strategyChoices(row *kinds.KindRow) string {
	choices := []string{"bare rules"}
	if len(row.Stanzas.Defaults) > 0 {
		choices = append(choices, "`"+row.Stanzas.Defaults[0]+"`")
	}
	if len(row.Stanzas.Overrides) > 0 {
		choices = append(choices, "`"+row.Stanzas.Overrides[0]+"`")
	}
	return strings.Join(choices, ", ")
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// validateStrategyTargets applies the row's Strategy.TargetKinds: a policy that sets the
// strategy field may target only those kinds (Envoy Gateway: "mergeType can only be used
// with xRoute targets"), by reference and by selector alike.
func validateStrategyTargets(p *policy.Policy, fldPath *field.Path) field.ErrorList {
	allowed := p.Row.Strategy.TargetKinds
	if k, outside := targetOutside(p, allowed); outside {
		return field.ErrorList{field.Forbidden(fldPath, fmt.Sprintf(
			"may be set only when every target is one of %s; this policy targets a %s", strings.Join(allowed, ", "), k))}
	}
	return nil
}

// targetOutside returns the first kind the policy targets, by reference or by selector,
// that is not among allowed (none when allowed is empty: any kind).
func targetOutside(p *policy.Policy, allowed []string) (string, bool) {
	if len(allowed) == 0 {
		return "", false
	}
	var kinds []string
	for _, ref := range p.TargetRefs {
		kinds = append(kinds, ref.Kind)
	}
	if list, ok := p.Spec()["targetSelectors"].([]any); ok {
		for _, item := range list {
			m, _ := item.(map[string]any)
			if k, ok := m["kind"].(string); ok {
				kinds = append(kinds, k)
			}
		}
	}
	for _, k := range kinds {
		if !slices.Contains(allowed, k) {
			return k, true
		}
	}
	return "", false
}
