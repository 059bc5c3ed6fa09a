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
	// Targetless says the label is on a kind no object of which can name a target: every
	// version's schema describes spec without targetRef, targetRefs or targetSelectors (and
	// does not keep unknown fields there), so the API server prunes any. Such a kind (an
	// implementation's parameters kind labelled by mistake: agentgateway's
	// AgentgatewayParameters at 75b4e6ce) attaches to nothing, so it is no policy kind to
	// judge: the doors add no row for it, and list it as labelled but targetless.
	Targetless bool
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
	// A version whose objects cannot name a target: the row may not require one, or every
	// policy stored at that version would be denied for naming none.
	targetless := 0
	for _, v := range versions {
		m, _ := v.(map[string]any)
		schema, _ := m["schema"].(map[string]any)
		if root, _ := schema["openAPIV3Schema"].(map[string]any); TargetlessSchema(root) {
			targetless++
		}
	}
	row.Targetless = targetless > 0 && targetless == len(versions)
	r.TargetsOptional = targetless > 0
	row.Row = r
	return row, true, nil
}

// TargetFields are the spec fields GEP-713 policies name their targets in.
var TargetFields = []string{"targetRef", "targetRefs", "targetSelectors"}

// TargetlessSchema reports whether one CRD version's openAPIV3Schema describes spec with
// none of TargetFields and does not keep unknown fields there
// (x-kubernetes-preserve-unknown-fields): the API server prunes whatever target an object of
// that version names. A schema that does not describe spec's fields says nothing: not
// targetless.
func TargetlessSchema(root map[string]any) bool {
	rootProps, _ := root["properties"].(map[string]any)
	spec, _ := rootProps["spec"].(map[string]any)
	props, ok := spec["properties"].(map[string]any)
	if keep, _ := spec["x-kubernetes-preserve-unknown-fields"].(bool); !ok || keep {
		return false
	}
	for _, f := range TargetFields {
		if _, ok := props[f]; ok {
			return false
		}
	}
	return true
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

// SchemaForDiscovery is the part of one CRD version's schema (the "schema" of a
// spec.versions item) that RowFromCRD reads: which target fields spec has, the maxItems of
// targetRefs, and whether spec keeps unknown fields; nil where the version describes no
// spec. A cache of CRDs keeps only it: a policy CRD's whole schema can be hundreds of KB.
func SchemaForDiscovery(schema map[string]any) map[string]any {
	root, _ := schema["openAPIV3Schema"].(map[string]any)
	rootProps, _ := root["properties"].(map[string]any)
	spec, ok := rootProps["spec"].(map[string]any)
	if !ok {
		return nil
	}
	kept := map[string]any{}
	if keep, _ := spec["x-kubernetes-preserve-unknown-fields"].(bool); keep {
		kept["x-kubernetes-preserve-unknown-fields"] = true
	}
	if props, ok := spec["properties"].(map[string]any); ok {
		fields := map[string]any{}
		for _, f := range TargetFields {
			field, ok := props[f].(map[string]any)
			if !ok {
				continue
			}
			fields[f] = map[string]any{}
			if n, ok := field["maxItems"]; ok && f == "targetRefs" {
				fields[f] = map[string]any{"maxItems": n}
			}
		}
		kept["properties"] = fields
	}
	return map[string]any{"openAPIV3Schema": map[string]any{"properties": map[string]any{"spec": kept}}}
}
