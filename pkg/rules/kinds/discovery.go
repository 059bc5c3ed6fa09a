package kinds

import (
	"fmt"
	"strings"
)

// SourceDiscovered is the Source of a row made from a CRD's policy label.
const SourceDiscovered = "discovered"

// ClassFromLabel reads the value of the gateway.networking.k8s.io/policy label: "Direct",
// "Inherited" or "true" in any case. "true" says only that the kind is a policy; GEP-713
// (via GEP-2649) asks that a kind that can be inherited be treated as Inherited.
func ClassFromLabel(value string) (Class, bool) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "direct":
		return Direct, true
	case "inherited", "true":
		return Inherited, true
	}
	return "", false
}

// DiscoveredRow builds the generic row for a CRD labelled gateway.networking.k8s.io/policy.
// It returns false when the label value names no class.
func DiscoveredRow(group, kind string, scope Scope, labelValue string) (KindRow, bool) {
	class, ok := ClassFromLabel(labelValue)
	if !ok {
		return KindRow{}, false
	}
	r := KindRow{
		Group:                 group,
		Kind:                  kind,
		Scope:                 scope,
		Class:                 class,
		TargetRefFields:       []string{"targetRef", "targetRefs", "targetSelectors"},
		CrossNamespaceTargets: true,
		Targets:               genericTargets(),
		Stanzas: Stanzas{
			Defaults:  []string{"defaults", "default"},
			Overrides: []string{"overrides", "override"},
		},
		Strategy: Strategy{
			Field:   "strategy",
			Values:  map[string]string{StrategyAtomic: StrategyAtomic, StrategyPatch: StrategyPatch, StrategyMerge: StrategyMerge},
			Default: StrategyAtomic,
		},
		// Whatever the label says: a Direct label does not prove the implementation keeps
		// one policy per target (kgateway's and agentgateway's merge field by field), and a
		// kind known only from its label must never be falsely denied. Two policies conflict
		// only where both set one scalar to different values.
		Conflicts: Conflicts{Mode: ConflictsValue, Granularity: StrategyPatch},
		Source:    SourceDiscovered,
	}
	if class == Direct {
		r.Stanzas = Stanzas{}
		r.Strategy = Strategy{Default: StrategyAtomic}
	}
	applyRowDefaults(&r)
	return r, true
}

// CRDRow is the row a CustomResourceDefinition declares with the gateway.networking.k8s.io/policy
// label, and the version its objects are stored at.
type CRDRow struct {
	Row           KindRow
	StoredVersion string
}

// RowFromCRD builds the discovered row of a CRD given as generic JSON. `webhook serve`
// (CRDs listed and watched), `webhook audit` (CRDs listed) and `webhook check` (CRDs among
// the manifests) all read CRDs through it. labelled is false for a CRD without the label;
// a labelled CRD whose row cannot be built is an error that says why.
func RowFromCRD(crd map[string]any) (row CRDRow, labelled bool, err error) {
	meta, _ := crd["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	value, labelled := labels[PolicyLabel].(string)
	if !labelled {
		return CRDRow{}, false, nil
	}
	spec, _ := crd["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	if group == "" || kind == "" {
		return CRDRow{}, true, fmt.Errorf("CustomResourceDefinition needs spec.group and spec.names.kind")
	}
	scope := Namespaced
	if s, _ := spec["scope"].(string); s == string(Cluster) {
		scope = Cluster
	}
	r, ok := DiscoveredRow(group, kind, scope, value)
	if !ok {
		return CRDRow{}, true, fmt.Errorf("label %s=%q names no policy class; use Direct, Inherited or true", PolicyLabel, value)
	}
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			r.Versions = append(r.Versions, name)
			if storage, _ := m["storage"].(bool); storage {
				row.StoredVersion = name
			}
		}
	}
	r.MaxTargetRefs = maxTargetRefsOf(versions)
	row.Row = r
	return row, true, nil
}

// maxTargetRefsOf reads the maxItems of spec.targetRefs from a CRD's versions: the greatest
// any version sets, or 0 (no limit) when one of them sets none, so that no version's policy
// is denied what its own schema accepts.
func maxTargetRefsOf(versions []any) int {
	most := 0
	for _, v := range versions {
		m, _ := v.(map[string]any)
		schema, _ := m["schema"].(map[string]any)
		root, _ := schema["openAPIV3Schema"].(map[string]any)
		props, _ := root["properties"].(map[string]any)
		spec, _ := props["spec"].(map[string]any)
		specProps, _ := spec["properties"].(map[string]any)
		refs, _ := specProps["targetRefs"].(map[string]any)
		n, ok := asInt(refs["maxItems"])
		if !ok || n <= 0 {
			return 0
		}
		most = max(most, n)
	}
	return most
}

// asInt reads a JSON number as decoded generically (float64, int64 or int).
func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), n == float64(int(n))
	case int64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}
