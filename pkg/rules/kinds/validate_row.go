package kinds

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// validateRow reports a row that cannot work, so a bad config file fails loudly at load.
func validateRow(r *KindRow) error {
	var problems []string
	if r.Kind == "" {
		problems = append(problems, "kind is required")
	}
	if r.Class != Direct && r.Class != Inherited {
		problems = append(problems, fmt.Sprintf("class %q must be Direct or Inherited", r.Class))
	}
	if r.Scope != Namespaced && r.Scope != Cluster {
		problems = append(problems, fmt.Sprintf("scope %q must be Namespaced or Cluster", r.Scope))
	}
	if len(r.Targets) == 0 {
		problems = append(problems, "targets must list at least one kind")
	}
	for _, f := range r.TargetRefFields {
		if f != "targetRef" && f != "targetRefs" && f != "targetSelectors" {
			problems = append(problems, fmt.Sprintf("targetRefFields entry %q must be targetRef, targetRefs or targetSelectors", f))
		}
	}
	for v, s := range r.Strategy.Values {
		if s != StrategyAtomic && s != StrategyPatch && s != StrategyMerge {
			problems = append(problems, fmt.Sprintf("strategy value %q maps to %q; must be atomic, patch or merge", v, s))
		}
	}
	if (r.Conflicts.OrderField != "" || r.Conflicts.OrderAnnotation != "") && len(r.Stanzas.Overrides) > 0 {
		// The rank says which policy's defaults win at one point; no implementation ranks
		// overrides, and the fold would not know which way.
		problems = append(problems, "conflicts.orderField and orderAnnotation apply to kinds without overrides")
	}
	for path, keys := range r.Strategy.ListKeys {
		if path == "" || len(keys) == 0 || slices.Contains(keys, "") {
			problems = append(problems, fmt.Sprintf("strategy.listKeys %q must name a list and at least one key field", path))
		}
	}
	for _, v := range r.Strategy.WholeLists {
		if _, ok := r.Strategy.Values[v]; !ok {
			problems = append(problems, fmt.Sprintf("strategy.wholeLists value %q is not one of strategy.values", v))
		}
	}
	switch {
	case r.TargetNamespace != "" && r.TargetNamespace != TargetNamespaceForbidden:
		problems = append(problems, fmt.Sprintf("targetNamespace %q must be empty or %s", r.TargetNamespace, TargetNamespaceForbidden))
	case r.TargetNamespace == TargetNamespaceForbidden && r.CrossNamespaceTargets:
		problems = append(problems, "targetNamespace forbidden and crossNamespaceTargets contradict each other")
	}
	for _, ref := range r.References {
		if ref.Shape != ObjectReferenceShape && ref.Shape != IssuerReferenceShape && ref.Shape != NameNamespaceShape {
			problems = append(problems, fmt.Sprintf("reference %s shape %q must be ObjectReference, IssuerReference or NameNamespace", ref.Path, ref.Shape))
		}
		if ref.Shape == NameNamespaceShape && ref.DefaultKind == "" {
			problems = append(problems, fmt.Sprintf("reference %s of shape NameNamespace must say its kind (defaultKind)", ref.Path))
		}
		switch ref.CrossNamespace {
		case "", CrossNamespaceGrant:
		case CrossNamespaceFree, CrossNamespaceIgnored:
			if len(ref.GrantModes) > 0 {
				problems = append(problems, fmt.Sprintf("reference %s: grantModes apply to crossNamespace grant only", ref.Path))
			}
		default:
			problems = append(problems, fmt.Sprintf("reference %s crossNamespace %q must be grant, free or ignored", ref.Path, ref.CrossNamespace))
		}
		if ref.CrossNamespace != "" && !ref.Namespaced {
			problems = append(problems, fmt.Sprintf("reference %s: crossNamespace applies to a namespaced reference", ref.Path))
		}
	}
	if r.Strategy.DeclaredBy != DeclaredByHigher && r.Strategy.DeclaredBy != DeclaredByLower {
		problems = append(problems, fmt.Sprintf("strategy.declaredBy %q must be higher or lower", r.Strategy.DeclaredBy))
	}
	if r.Order != OrderGEP && r.Order != OrderOldestWins && r.Order != OrderNameFirst {
		problems = append(problems, fmt.Sprintf("order %q must be gep, oldestWins or nameFirst", r.Order))
	}
	if !slices.Contains(conflictModes, r.Conflicts.Mode) {
		problems = append(problems, fmt.Sprintf("conflicts.mode %q must be none, value, presence, fields, never or key", r.Conflicts.Mode))
	}
	if (r.Conflicts.Mode == ConflictsKey) != (r.Conflicts.Key != nil) {
		problems = append(problems, "conflicts.key must be set with conflicts.mode key, and only then")
	} else if r.Conflicts.Key != nil {
		if err := r.Conflicts.Key.compile(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if (r.Conflicts.Mode == ConflictsFields) != (len(r.Conflicts.Fields) > 0) {
		problems = append(problems, "conflicts.fields must be listed with conflicts.mode fields, and only then")
	}
	if r.Conflicts.OrderAnnotation != "" && r.Conflicts.OrderField != "" {
		problems = append(problems, "conflicts.orderAnnotation and conflicts.orderField may not both be set")
	}
	if strings.Contains(r.Conflicts.OrderField, ".") {
		problems = append(problems, fmt.Sprintf("conflicts.orderField %q must be a top-level spec field", r.Conflicts.OrderField))
	}
	if g := r.Conflicts.Granularity; g != "" && g != StrategyAtomic && g != StrategyPatch && g != StrategyMerge {
		problems = append(problems, fmt.Sprintf("conflicts.granularity %q must be atomic, patch or merge", g))
	}
	if _, ok := effectiveDepths[r.EffectiveTarget]; r.EffectiveTarget != "" && !ok {
		problems = append(problems, fmt.Sprintf("effectiveTarget %q must be one of %s", r.EffectiveTarget, strings.Join(effectiveTargetNames(), ", ")))
	}
	targetKinds := map[string]bool{}
	for _, t := range r.Targets {
		targetKinds[t.Kind] = true
		switch t.Section {
		case NoSections, Listener, RouteRule, ServicePort, SubBackend:
		default:
			problems = append(problems, fmt.Sprintf("target %s section %q must be Listener, RouteRule, ServicePort or SubBackend", t.Kind, t.Section))
		}
		info, known := TargetInfoFor(schema.GroupKind{Group: t.Group, Kind: t.Kind})
		switch {
		case !known && !r.widenedTarget(t):
			problems = append(problems, fmt.Sprintf("target %s is not a kind the webhook can resolve (%s)", QualifiedKind(t.Group, t.Kind), knownTargetNames()))
		case t.FromNamespace && info.Scope != Cluster:
			problems = append(problems, fmt.Sprintf("target %s is namespaced: fromNamespace applies to cluster-scoped kinds", t.Kind))
		}
	}
	for _, set := range r.TargetKindSets {
		for _, k := range set {
			if !targetKinds[k] {
				problems = append(problems, fmt.Sprintf("targetKindSets kind %q is not one of the row's targets", k))
			}
		}
	}
	for _, k := range r.Strategy.TargetKinds {
		if !targetKinds[k] {
			problems = append(problems, fmt.Sprintf("strategy.targetKinds %q is not one of the row's targets", k))
		}
	}
	problems = append(problems, validateFieldTargets(r, targetKinds)...)
	problems = append(problems, validateStatusConditions(r.StatusConditions)...)
	if len(problems) > 0 {
		return fmt.Errorf("kind %s: %s", QualifiedKind(r.Group, r.Kind), strings.Join(problems, "; "))
	}
	return nil
}

// validateFieldTargets reports a fieldTargets entry that names no field, a target field,
// the strategy field (Strategy.TargetKinds holds its rule), a field twice, or a kind that is
// none of the row's targets (targetKinds, by kind name).
func validateFieldTargets(r *KindRow, targetKinds map[string]bool) []string {
	var problems []string
	seen := map[string]bool{}
	for _, ft := range r.FieldTargets {
		switch {
		case ft.Field == "" || strings.HasPrefix(ft.Field, ".") || strings.HasSuffix(ft.Field, ".") || strings.Contains(ft.Field, ".."):
			problems = append(problems, fmt.Sprintf("fieldTargets field %q must be a dotted path below spec", ft.Field))
			continue
		case slices.Contains([]string{"targetRef", "targetRefs", "targetSelectors"}, ft.Field):
			problems = append(problems, fmt.Sprintf("fieldTargets field %q is a target field", ft.Field))
		case ft.Field == r.Strategy.Field:
			problems = append(problems, fmt.Sprintf("fieldTargets field %q is the strategy field: use strategy.targetKinds", ft.Field))
		case seen[ft.Field]:
			problems = append(problems, fmt.Sprintf("fieldTargets field %q is listed twice", ft.Field))
		}
		seen[ft.Field] = true
		if len(ft.TargetKinds) == 0 {
			problems = append(problems, fmt.Sprintf("fieldTargets %q must list at least one target kind", ft.Field))
		}
		for _, k := range ft.TargetKinds {
			if !targetKinds[k] {
				problems = append(problems, fmt.Sprintf("fieldTargets %q kind %q is not one of the row's targets", ft.Field, k))
			}
		}
	}
	return problems
}

// applyRowDefaults fills the fields a config file may leave out.
func applyRowDefaults(r *KindRow) {
	if r.Scope == "" {
		r.Scope = Namespaced
	}
	if len(r.TargetRefFields) == 0 {
		r.TargetRefFields = []string{"targetRefs"}
	}
	for i := range r.References {
		if r.References[i].Shape == "" {
			r.References[i].Shape = ObjectReferenceShape
		}
	}
	if r.Strategy.Default == "" {
		r.Strategy.Default = StrategyAtomic
	}
	if r.Strategy.DeclaredBy == "" {
		r.Strategy.DeclaredBy = DeclaredByHigher
	}
	if r.Order == "" {
		r.Order = OrderGEP
	}
	if r.Conflicts.Mode == "" {
		r.Conflicts.Mode = ConflictsValue
		if r.Class == Direct {
			r.Conflicts.Mode = ConflictsNone
		}
	}
}

// QualifiedKind names a kind in messages: "group/Kind", or "Kind" for the core group.
func QualifiedKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// knownTargetNames lists the target kinds the webhook resolves, for messages.
func knownTargetNames() string {
	names := make([]string, 0, len(targetKinds))
	for _, t := range targetKinds {
		names = append(names, QualifiedKind(t.Group, t.Kind))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
