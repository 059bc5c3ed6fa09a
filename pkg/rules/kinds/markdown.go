package kinds

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// KindTableMarkdown renders the kind table as the README's "what is enforced" table.
func KindTableMarkdown(t *KindTable) string {
	var b strings.Builder
	b.WriteString("| policy kind | class | targets (sectionName) | cross-namespace targets | stanzas | strategy values | same-level conflicts | same-level winner | references checked |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range t.Rows() {
		var targets []string
		for _, tk := range r.Targets {
			s := tk.Kind
			if tk.Section != NoSections {
				s += " (" + tk.Section.Noun() + ")"
			}
			targets = append(targets, s)
		}
		if r.OtherTargetsImplementationSpecific {
			targets = append(targets, "other kinds with a warning")
		}
		if r.HasTargetRefField("targetSelectors") && r.SelectorSectionName {
			targets = append(targets, "by label selector too (with sectionName)")
		} else if r.HasTargetRefField("targetSelectors") {
			targets = append(targets, "by label selector too")
		}
		if r.MaxTargetRefs > 0 && r.HasTargetRefField("targetRefs") {
			targets[len(targets)-1] += fmt.Sprintf("; at most %d", r.MaxTargetRefs)
		}
		stanzas := []string{"bare"}
		stanzas = append(stanzas, r.Stanzas.Defaults...)
		stanzas = append(stanzas, r.Stanzas.Overrides...)
		strategies := "—"
		if r.Strategy.Field != "" {
			strategies = fmt.Sprintf("`%s`: %s (default %s)", r.Strategy.Field, strings.Join(r.StrategyValues(), ", "), r.Strategy.Default)
			if r.Strategy.DeclaredBy == DeclaredByLower {
				strategies += ", declared by the lower policy"
			}
			if len(r.Strategy.TargetKinds) > 0 {
				strategies += ", only on " + strings.Join(r.Strategy.TargetKinds, ", ")
			}
		} else {
			strategies = "(none; " + r.Strategy.Default + ")"
		}
		if keyed := r.Strategy.keyedLists(); keyed != "" {
			strategies += "; lists merged by key: " + keyed
			if len(r.Strategy.WholeLists) > 0 {
				strategies += " (whole with " + strings.Join(r.Strategy.WholeLists, ", ") + ")"
			}
		}
		var refs []string
		for _, ref := range r.References {
			s := "`" + ref.Path + "`"
			if ref.OtherKindsImplementationSpecific {
				s += " (" + strings.Join(ref.Kinds, ", ") + "; other kinds with a warning)"
			}
			switch {
			case ref.CrossNamespace == CrossNamespaceFree:
				s += " (another namespace without a grant)"
			case ref.CrossNamespace == CrossNamespaceIgnored:
				s += " (namespace ignored, with a warning)"
			case len(ref.GrantModes) > 0:
				s += " (a grant in mode " + strings.Join(ref.GrantModes, ", ") + ")"
			}
			refs = append(refs, s)
		}
		cross := "no"
		if r.CrossNamespaceTargets {
			cross = "with ReferenceGrant"
		}
		fmt.Fprintf(&b, "| `%s` %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Group, r.Kind, r.Class, strings.Join(targets, ", "), cross,
			strings.Join(stanzas, ", "), strategies, r.describeConflicts(), r.winner(), orDash(strings.Join(refs, ", ")))
	}
	return b.String()
}

// ImplementationsMarkdown renders the implementations: the GatewayClass controller names
// each serves, where an installation changes them, and the kinds that name it.
func ImplementationsMarkdown(t *KindTable) string {
	var b strings.Builder
	b.WriteString("| implementation | serves GatewayClasses whose controllerName is | set in the installation by | reads ReferenceGrants | policy kinds |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, impl := range t.Implementations() {
		var names, served []string
		for _, c := range impl.ControllerNames {
			names = append(names, "`"+c+"`")
		}
		for _, r := range t.Rows() {
			if slices.Contains(r.Implementations, impl.Name) {
				served = append(served, r.Kind)
			}
		}
		controllers := strings.Join(names, ", ")
		if controllers == "" {
			controllers = "none: it acts through no Gateway"
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s | %s |\n", impl.title(), impl.Name, controllers, orDash(impl.Setting), impl.ReferenceGrants.describe(), orDash(strings.Join(served, ", ")))
	}
	return b.String()
}

// describe says in a table cell how an implementation reads ReferenceGrants.
func (g *GrantReading) describe() string {
	if g == nil {
		return "as written"
	}
	var parts []string
	for _, a := range g.CoreGroupAliases {
		parts = append(parts, "group `"+a+"` is the core group")
	}
	if g.Mode != "" {
		s := "in mode " + g.Mode + " of " + strings.Join(g.Modes, ", ")
		if g.ModeSetting != "" {
			s += " (`" + g.ModeSetting + "`)"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "as written"
	}
	return strings.Join(parts, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// keyedLists lists the keyed lists as "`path` by key, key".
func (s *Strategy) keyedLists() string {
	var out []string
	for path, keys := range s.ListKeys {
		out = append(out, "`"+path+"` by "+strings.Join(keys, ", "))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// describeConflicts says in a table cell when two policies at one attachment point
// conflict: never where the implementation settles every overlap by name.
func (r *KindRow) describeConflicts() string {
	c := r.Conflicts
	if r.Order == OrderNameFirst && c.Mode != ConflictsNever {
		return "never (overlaps settled by name: " + c.describeMode() + ")"
	}
	s := c.describeMode()
	switch {
	case c.Mode == ConflictsNever:
	case c.OrderAnnotation != "":
		s += ", at equal `" + c.OrderAnnotation + "` annotation"
	case c.OrderField != "":
		s += ", at equal `spec." + c.OrderField + "`"
	}
	return s
}

func (c Conflicts) describeMode() string {
	switch c.Mode {
	case ConflictsNone:
		return "any second policy"
	case ConflictsValue:
		s := "same setting, another value"
		if c.Granularity != "" {
			s += " (by " + c.Granularity + ")"
		}
		return s
	case ConflictsPresence:
		return "same setting"
	case ConflictsFields:
		return "same field: `" + strings.Join(c.Fields, "`, `") + "`"
	case ConflictsKey:
		return "same " + c.Key.Name + " (from `" + c.Key.Field + "`)"
	}
	return "never"
}

// winner says in a table cell which of two policies at one attachment point wins.
func (r *KindRow) winner() string {
	by := ""
	switch {
	case r.Conflicts.OrderAnnotation != "":
		by = "the greater `" + r.Conflicts.OrderAnnotation + "`, then "
	case r.Conflicts.OrderField != "":
		by = "the greater `spec." + r.Conflicts.OrderField + "`, then "
	}
	switch {
	case r.Order == OrderNameFirst:
		return by + "the first by namespace/name"
	case r.Conflicts.Mode == ConflictsNone || (r.Class == Direct && r.Conflicts.Mode != ConflictsValue && r.Conflicts.Mode != ConflictsPresence) || r.Order == OrderOldestWins:
		return by + "the oldest"
	case r.Class == Direct:
		return by + "the newer"
	}
	return by + "GEP-713: the newer default, the older override"
}
