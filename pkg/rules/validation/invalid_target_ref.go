package validation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidateTargetRefs applies every rule Gateway API applies to policy target references,
// plus the row's: allowed kinds, sections, cross-namespace targets, count and uniqueness.
func ValidateTargetRefs(p *policy.Policy, _ topology.Snapshot, _ *Messages) field.ErrorList {
	row := p.Row
	spec := field.NewPath("spec")
	errs := append(field.ErrorList{}, p.DecodeErrors()...)

	errs = append(errs, validateRefFields(p, spec)...)
	if p.TooManyTargetRefs() {
		// One error, not one per reference: the list is refused whole (the CRD's maxItems
		// would refuse it too), and 10,000 item errors would only make a megabyte answer.
		errs = append(errs, field.TooMany(spec.Child("targetRefs"), len(p.TargetRefs), row.MaxRefs()))
		return withReason(ReasonInvalidTargetRef, errs...)
	}
	for _, ref := range p.TargetRefs {
		errs = append(errs, validateTargetRef(p, ref)...)
	}
	errs = append(errs, validateUniqueTargets(p)...)
	errs = append(errs, validateTargetKindSets(p)...)
	errs = append(errs, validateFieldTargets(p, spec)...)
	if p.Row.HasTargetRefField("targetSelectors") {
		errs = append(errs, validateTargetSelectors(p, spec.Child("targetSelectors"))...)
	}
	return withReason(ReasonInvalidTargetRef, errs...)
}

// validateRefFields checks which of targetRef/targetRefs are set against the row.
func validateRefFields(p *policy.Policy, spec *field.Path) field.ErrorList {
	row := p.Row
	var errs field.ErrorList
	hasSingle, hasList := row.HasTargetRefField("targetRef"), row.HasTargetRefField("targetRefs")
	switch {
	case p.HasTargetRef() && p.HasTargetRefs() && hasSingle && hasList:
		errs = append(errs, field.Forbidden(spec.Child("targetRef"), "may not be set together with `targetRefs`; use `targetRefs` only"))
	case p.HasTargetRef() && !hasSingle:
		errs = append(errs, field.Forbidden(spec.Child("targetRef"), fmt.Sprintf("not supported by %s; use `targetRefs`", row.Kind)))
	case p.HasTargetRefs() && !hasList:
		errs = append(errs, field.Forbidden(spec.Child("targetRefs"), fmt.Sprintf("not supported by %s; use `targetRef`", row.Kind)))
	}
	hasSelectors := row.HasTargetRefField("targetSelectors")
	if p.HasTargetSelectors() && !hasSelectors {
		errs = append(errs, field.Forbidden(spec.Child("targetSelectors"), fmt.Sprintf("not supported by %s; use `%s`", row.Kind, refFieldName(row))))
	}
	if p.HasTargetSelectors() && hasSelectors && row.SelectorsExclusive && (p.HasTargetRef() || p.HasTargetRefs()) {
		errs = append(errs, field.Forbidden(spec.Child("targetSelectors"), fmt.Sprintf("may not be set together with `%s`; %s names its targets one way", refFieldName(row), withArticle(row.Kind))))
	}
	// No target at all: no field, or an empty list (a list of bad items is reported item by
	// item instead). Selectors are targets: a selector-only policy is not targetless.
	if p.HasTargetRef() || p.HasTargetRefs() || p.HasTargetSelectors() {
		for _, f := range row.ExclusiveFields {
			if v, ok := p.Spec()[f]; ok && v != nil {
				errs = append(errs, field.Forbidden(spec.Child(f), fmt.Sprintf("may not be set together with `%s`; %s takes one or the other", refFieldName(row), withArticle(row.Kind))))
			}
		}
	}
	if len(p.TargetRefs) == 0 && !p.HasTargetRef() && len(p.DecodeErrors()) == 0 && !(p.HasTargetSelectors() && hasSelectors) && !row.TargetsOptional {
		errs = append(errs, field.Required(spec.Child(refFieldName(row)), "a policy must target at least one object"))
	}
	return errs
}

// refFieldName is the target reference field to name in a message: targetRefs where the
// kind has it.
func refFieldName(row *kinds.KindRow) string {
	if row.HasTargetRefField("targetRefs") || !row.HasTargetRefField("targetRef") {
		return "targetRefs"
	}
	return "targetRef"
}

// validateTargetRef checks one reference's format and that the row allows its target.
func validateTargetRef(p *policy.Policy, ref policy.TargetRef) field.ErrorList {
	row := p.Row
	var errs field.ErrorList
	path := ref.Path

	switch {
	case len(ref.Group) > maxGroupLength:
		errs = append(errs, field.TooLong(path.Child("group"), ref.Group, maxGroupLength))
	case !groupPattern.MatchString(ref.Group):
		errs = append(errs, field.Invalid(path.Child("group"), ref.Group, "must be a lowercase DNS subdomain without a version (for example `gateway.networking.k8s.io`), or empty for the core group"))
	}
	switch {
	case ref.Kind == "":
		errs = append(errs, field.Required(path.Child("kind"), ""))
	case len(ref.Kind) > maxKindLength:
		errs = append(errs, field.TooLong(path.Child("kind"), ref.Kind, maxKindLength))
	case !kindPattern.MatchString(ref.Kind):
		errs = append(errs, field.Invalid(path.Child("kind"), ref.Kind, "must start with a letter and contain only letters, digits and '-'"))
	}
	switch {
	case ref.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case len(ref.Name) > maxNameLength:
		errs = append(errs, field.TooLong(path.Child("name"), ref.Name, maxNameLength))
	case !objectNamePattern.MatchString(ref.Name):
		// Gateway API's ObjectName only bounds the length, but no object of any target kind
		// can carry another name: such a reference could never resolve.
		errs = append(errs, field.Invalid(path.Child("name"), ref.Name, "must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.'), as every object name is"))
	}
	if ref.HasNamespace {
		errs = append(errs, validateTargetNamespace(p, ref)...)
	}

	target, ok := row.Target(ref.Group, ref.Kind)
	if !ok {
		// A malformed group or kind is already reported; "unsupported" would only add noise.
		// Where the spec leaves other kinds to implementations, WarnImplementationSpecific
		// says so instead: the CRD accepts them and some implementation may act on them.
		if ref.Kind != "" && kindPattern.MatchString(ref.Kind) && groupPattern.MatchString(ref.Group) && !row.OtherTargetsImplementationSpecific {
			errs = append(errs, unsupportedTarget(row, ref))
		}
		return errs
	}
	if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}); info.Scope == kinds.Cluster && row.Scope == kinds.Namespaced && !target.FromNamespace {
		switch {
		case !info.OwnNamespaceOnly:
			errs = append(errs, field.Forbidden(path.Child("kind"), fmt.Sprintf(
				"a namespaced policy may not target cluster-scoped %s; GEP-713 requires a cluster-scoped policy kind for it", ref.Kind)))
		case ref.Name != "" && ref.Name != p.Namespace:
			errs = append(errs, field.Forbidden(path.Child("name"), fmt.Sprintf(
				"a namespaced policy may only target its own Namespace %q", p.Namespace)))
		}
	}
	if ref.HasSection {
		switch {
		case target.Section == kinds.NoSections:
			errs = append(errs, field.Forbidden(path.Child("sectionName"), fmt.Sprintf(
				"not supported when %s targets %s; remove `sectionName` to target the whole object", row.Kind, ref.Kind)))
		case ref.SectionName == "":
			errs = append(errs, field.Invalid(path.Child("sectionName"), ref.SectionName, "must not be empty; omit `sectionName` to target the whole object"))
		case len(ref.SectionName) > maxSectionLength:
			errs = append(errs, field.TooLong(path.Child("sectionName"), ref.SectionName, maxSectionLength))
		case !sectionNamePattern.MatchString(ref.SectionName):
			errs = append(errs, field.Invalid(path.Child("sectionName"), ref.SectionName, fmt.Sprintf(
				"must be the name of a %s: lowercase alphanumerics, '-' and '.'", target.Section.Noun())))
		}
	}
	return errs
}

func validateTargetNamespace(p *policy.Policy, ref policy.TargetRef) field.ErrorList {
	path := ref.Path.Child("namespace")
	switch {
	case ref.Namespace == "" && p.Row.TargetNamespace == kinds.TargetNamespaceForbidden:
		return nil // the CRD's rule is `self.size() == 0`: the empty string is what it asks for
	case ref.Namespace == "":
		return field.ErrorList{field.Invalid(path, ref.Namespace, "must not be empty; omit `namespace` to target the policy's own namespace")}
	case p.Row.TargetNamespace == kinds.TargetNamespaceForbidden:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"%s may name no namespace in a target reference, not even its own: its CRD's rule on the field is `self.size() == 0`; omit `namespace`", p.Row.Kind))}
	case len(ref.Namespace) > maxNamespaceLength:
		return field.ErrorList{field.TooLong(path, ref.Namespace, maxNamespaceLength)}
	case !namespacePattern.MatchString(ref.Namespace):
		return field.ErrorList{field.Invalid(path, ref.Namespace, "must be a DNS label: lowercase alphanumerics and '-'")}
	case ref.Namespace != p.Namespace && !p.Row.CrossNamespaceTargets:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"%s may only target objects in its own namespace %q", p.Row.Kind, p.Namespace))}
	}
	return nil
}

// unsupportedTarget names the field that is wrong: the group when the kind is allowed in
// another group, otherwise the kind.
func unsupportedTarget(row *kinds.KindRow, ref policy.TargetRef) *field.Error {
	var groups []string
	for _, t := range row.Targets {
		if t.Kind == ref.Kind {
			groups = append(groups, t.Group)
		}
	}
	if len(groups) > 0 {
		return field.NotSupported(ref.Path.Child("group"), ref.Group, groups)
	}
	return field.NotSupported(ref.Path.Child("kind"), kinds.QualifiedKind(ref.Group, ref.Kind), row.TargetKinds())
}

// validateTargetKindSets applies the row's TargetKindSets: every reference's kind comes
// from the set of the first one's.
func validateTargetKindSets(p *policy.Policy) field.ErrorList {
	sets := p.Row.TargetKindSets
	if len(sets) == 0 || len(p.TargetRefs) < 2 {
		return nil
	}
	first := p.TargetRefs[0]
	i := slices.IndexFunc(sets, func(set []string) bool { return slices.Contains(set, first.Kind) })
	if i < 0 {
		return nil // a kind the policy may not target at all: reported as such
	}
	var errs field.ErrorList
	for _, ref := range p.TargetRefs[1:] {
		if slices.Contains(sets[i], ref.Kind) || !slices.ContainsFunc(sets, func(set []string) bool { return slices.Contains(set, ref.Kind) }) {
			continue
		}
		var alternatives []string
		for _, set := range sets {
			alternatives = append(alternatives, strings.Join(set, " and "))
		}
		errs = append(errs, field.Forbidden(ref.Path.Child("kind"), fmt.Sprintf(
			"%s may not mix %s targets with %s targets (%s): its targets are all %s",
			withArticle(p.Row.Kind), first.Kind, ref.Kind, first.Path, strings.Join(alternatives, ", or all "))))
	}
	return errs
}

// validateUniqueTargets rejects two references to one attachment point, and applies the
// BackendTLSPolicy sectionName rules (apis/v1/backendtlspolicy_types.go CEL) to rows that ask.
func validateUniqueTargets(p *policy.Policy) field.ErrorList {
	var errs field.ErrorList
	type object struct{ group, kind, namespace, name string }
	firstByKey := map[policy.TargetKey]int{}
	firstByObject := map[object]int{}
	for i, ref := range p.TargetRefs {
		key := p.Key(ref)
		if j, seen := firstByKey[key]; seen {
			d := field.Duplicate(ref.Path, key.String())
			d.Detail = fmt.Sprintf("same target as %s", p.TargetRefs[j].Path)
			if p.Row.UniqueSectionPerTarget {
				d.Detail = "sectionName must be unique when targetRefs includes 2 or more references to the same target"
			}
			errs = append(errs, d)
			continue
		}
		firstByKey[key] = i
		obj := object{key.Group, key.Kind, key.Namespace, key.Name}
		j, seen := firstByObject[obj]
		if !seen {
			firstByObject[obj] = i
			continue
		}
		if p.Row.UniqueSectionPerTarget && (ref.SectionName == "") != (p.TargetRefs[j].SectionName == "") {
			errs = append(errs, field.Invalid(ref.Path.Child("sectionName"), ref.SectionName,
				"sectionName must be specified when targetRefs includes 2 or more references to the same target"))
		}
	}
	return errs
}

// ValidateReferences checks the format and kind of every reference field of the row.
// A malformed reference is an InvalidTargetRef, like a malformed targetRef.
func ValidateReferences(p *policy.Policy, _ topology.Snapshot, _ *Messages) field.ErrorList {
	refs, errs := p.ObjectRefs()
	for _, ref := range refs {
		if ref.Name == "" {
			errs = append(errs, field.Required(ref.Path.Child("name"), ""))
		} else if len(ref.Name) > maxNameLength {
			errs = append(errs, field.TooLong(ref.Path.Child("name"), ref.Name, maxNameLength))
		}
		if !groupPattern.MatchString(ref.Group) {
			errs = append(errs, field.Invalid(ref.Path.Child("group"), ref.Group, "must be a lowercase DNS subdomain, or empty for the core group"))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Required(ref.Path.Child("kind"), ""))
		} else if len(ref.Spec.Kinds) > 0 && !slices.Contains(ref.Spec.Kinds, ref.Kind) && !ref.Spec.OtherKindsImplementationSpecific {
			errs = append(errs, field.NotSupported(ref.Path.Child("kind"), ref.Kind, ref.Spec.Kinds))
		}
		if !ref.HasNamespace {
			continue
		}
		switch {
		case !ref.Spec.Namespaced && ref.Namespace != p.Namespace:
			errs = append(errs, field.Forbidden(ref.Path.Child("namespace"), "must refer to an object in the policy's own namespace"))
		case !namespacePattern.MatchString(ref.Namespace) || len(ref.Namespace) > maxNamespaceLength:
			errs = append(errs, field.Invalid(ref.Path.Child("namespace"), ref.Namespace, "must be a DNS label: lowercase alphanumerics and '-', at most 63 characters"))
		}
	}
	return withReason(ReasonInvalidTargetRef, errs...)
}

// withArticle puts "a" or "an" before a kind's name, as its first letter sounds.
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
