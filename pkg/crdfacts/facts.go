package crdfacts

import (
	"regexp"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// TargetFields are the spec fields GEP-713 policies take their targets in.
var TargetFields = kinds.TargetFields

// Facts are what one CRD version says about a policy kind's targets and references.
type Facts struct {
	Version string `json:"-"`
	// TargetRefFields are the target fields the spec schema has.
	TargetRefFields []string `json:"targetRefFields,omitempty"`
	// MaxTargetRefs is spec.targetRefs' maxItems; 0 when the CRD sets none.
	MaxTargetRefs int `json:"maxTargetRefs,omitempty"`
	// TargetKinds are the kinds the CRD's kind enums and CEL rules about targets admit,
	// sorted; nil when they restrict none.
	TargetKinds []string `json:"targetKinds,omitempty"`
	// TargetGroups likewise, from group enums and CEL rules ("" is the core group).
	TargetGroups []string `json:"targetGroups,omitempty"`
	// FieldTargetKinds maps a spec field to the only target kinds a CEL rule lets a
	// policy that sets it have (Envoy Gateway: "mergeType can only be used with xRoute
	// targets").
	FieldTargetKinds map[string][]string `json:"fieldTargetKinds,omitempty"`
	// TargetNamespace is what a target reference may say about its namespace: "absent"
	// (no such field), "forbidden" (the field exists, a rule or maxLength keeps it empty)
	// or "allowed".
	TargetNamespace string `json:"targetNamespace"`
	// ExclusiveFields are the spec fields a CEL rule forbids together with a target field
	// (Istio: "only one of targetRefs or selector can be set").
	ExclusiveFields []string `json:"exclusiveFields,omitempty"`
	// SelectorsExclusive says a CEL rule forbids targetSelectors together with targetRef(s).
	SelectorsExclusive bool `json:"selectorsExclusive,omitempty"`
	// References are the reference-shaped fields of the spec outside the target fields
	// (objects with name and kind), as row paths ("a.b[]").
	References []Ref `json:"references,omitempty"`
}

// Ref is one reference-shaped field.
type Ref struct {
	Path string `json:"path"`
	// Namespaced says the reference has a namespace field (it may cross namespaces).
	Namespaced bool `json:"namespaced,omitempty"`
	// Kinds are the kinds its kind enum or the CEL rules about it admit; nil when they
	// restrict none.
	Kinds []string `json:"kinds,omitempty"`
}

var (
	quotedKind  = regexp.MustCompile(`'([A-Z][A-Za-z0-9]*)'`)
	quotedGroup = regexp.MustCompile(`group\s*(?:==|in)\s*\[?\s*'([a-z0-9.-]*)'`)
	fieldRule   = regexp.MustCompile(`^\s*!\s*has\(self\.([A-Za-z0-9_]+)\)\s*\|\|`)
	countedHas  = regexp.MustCompile(`\(has\(self\.([A-Za-z0-9_]+)\)\s*\?\s*1\s*:\s*0\)`)
	// hasList is kubebuilder's ExactlyOneOf/AtMostOneOf rule:
	// [has(self.a),has(self.b)].filter(x,x==true).size() == 1 (agentgateway's targets).
	hasList = regexp.MustCompile(`^\[\s*has\(self\.[A-Za-z0-9_]+\)(\s*,\s*has\(self\.[A-Za-z0-9_]+\))*\s*\]\.filter\(\s*x\s*,\s*x\s*==\s*true\s*\)\.size\(\)`)
	hasAtom = regexp.MustCompile(`has\(self\.([A-Za-z0-9_.]+)\)`)
	// ifThen is a rule that holds only under a condition: cond ? rule : true.
	ifThen = regexp.MustCompile(`(?s)^\s*(.+?)\s*\?\s*(.+?)\s*:\s*true\s*$`)
	// hasOnly is a condition made of has() tests joined by &&, nothing else.
	hasOnly = regexp.MustCompile(`^\s*has\(self\.[A-Za-z0-9_.]+\)(\s*&&\s*has\(self\.[A-Za-z0-9_.]+\))*\s*$`)
	// notExists is a rule that excludes some kinds (!self.targetRefs.exists(t, t.kind ==
	// 'Service')) rather than listing the admitted ones.
	notExists = regexp.MustCompile(`!\s*self\.[A-Za-z0-9_]+\.exists\(`)
	atMostOne = regexp.MustCompile(`(<=|==)\s*1\s*$`)
	// literalKinds is a kind pattern that only lists kinds: ^(Gateway|HTTPRoute)$.
	literalKinds = regexp.MustCompile(`^\^?\(?([A-Z][A-Za-z0-9]*(?:\|[A-Z][A-Za-z0-9]*)*)\)?\$?$`)
	emptyRule    = regexp.MustCompile(`self\.size\(\)\s*==\s*0|self\s*==\s*''`)
)

// FactsOf reads the facts of one served version of a CRD.
func FactsOf(c *CRD, version string) Facts {
	f := Facts{Version: version, FieldTargetKinds: map[string][]string{}}
	spec := m(m(c.Schemas[version]["properties"])["spec"])
	props := m(spec["properties"])
	for _, name := range TargetFields {
		if _, ok := props[name]; ok {
			f.TargetRefFields = append(f.TargetRefFields, name)
		}
	}
	if tr := m(props["targetRefs"]); tr != nil {
		f.MaxTargetRefs = intOf(tr["maxItems"])
	}

	// The schemas a target reference is described by, and the rules that speak of targets.
	var refSchemas []map[string]any
	var rules []string
	rules = append(rules, rulesOf(spec)...)
	for _, name := range TargetFields {
		s := m(props[name])
		if s == nil {
			continue
		}
		rules = append(rules, rulesOf(s)...)
		if items := m(s["items"]); items != nil {
			s = items
			rules = append(rules, rulesOf(s)...)
		}
		if name != "targetSelectors" {
			refSchemas = append(refSchemas, s)
		}
	}
	kinds, groups := map[string]bool{}, map[string]bool{}
	for _, s := range refSchemas {
		p := m(s["properties"])
		for _, k := range enumKinds(m(p["kind"])) {
			kinds[k] = true
		}
		for _, e := range list(m(p["group"])["enum"]) {
			if g, ok := e.(string); ok {
				groups[g] = true
			}
		}
	}
	for _, r := range rules {
		if strings.Contains(r, "kind") {
			field, body, ruled := fieldOfRule(r)
			var ks []string
			for _, mm := range quotedKind.FindAllStringSubmatch(body, -1) {
				ks = append(ks, mm[1])
			}
			if len(ks) == 0 {
				continue
			}
			if ruled {
				if field != "" {
					f.FieldTargetKinds[field] = sortedSet(append(f.FieldTargetKinds[field], ks...))
				}
				continue
			}
			for _, k := range ks {
				kinds[k] = true
			}
		}
		if strings.Contains(r, "group") {
			for _, mm := range quotedGroup.FindAllStringSubmatch(r, -1) {
				groups[mm[1]] = true
			}
		}
	}
	f.TargetKinds = keys(kinds)
	f.TargetGroups = keys(groups)

	exclusive := map[string]bool{}
	for _, r := range rulesOf(spec) {
		if !atMostOne.MatchString(strings.TrimSpace(r)) {
			continue
		}
		counted := countedHas.FindAllStringSubmatch(r, -1)
		if hasList.MatchString(strings.TrimSpace(r)) {
			counted = hasAtom.FindAllStringSubmatch(r, -1)
		}
		var targets, others []string
		for _, mm := range counted {
			if isTargetField(mm[1]) {
				targets = append(targets, mm[1])
			} else {
				others = append(others, mm[1])
			}
		}
		if len(targets) == 0 {
			continue
		}
		for _, o := range others {
			exclusive[o] = true
		}
		for _, t := range targets {
			if t == "targetSelectors" && len(targets) > 1 {
				f.SelectorsExclusive = true
			}
		}
	}
	f.ExclusiveFields = keys(exclusive)

	f.TargetNamespace = "absent"
	for _, s := range refSchemas {
		ns := m(m(s["properties"])["namespace"])
		if ns == nil {
			continue
		}
		state := "allowed"
		if ml, ok := ns["maxLength"]; ok && intOf(ml) == 0 {
			state = "forbidden"
		}
		for _, r := range rulesOf(ns) {
			if emptyRule.MatchString(r) {
				state = "forbidden"
			}
		}
		if f.TargetNamespace != "allowed" {
			f.TargetNamespace = state
		}
	}

	for name, s := range props {
		if isTargetField(name) {
			continue
		}
		var down []string
		for _, r := range rulesOf(spec) {
			if strings.Contains(r, "self."+name) {
				down = append(down, r)
			}
		}
		walkRefs(m(s), name, down, 0, &f.References)
	}
	sort.Slice(f.References, func(i, j int) bool { return f.References[i].Path < f.References[j].Path })
	return f
}

// fieldOfRule reads a CEL rule about target kinds: ruled says it holds only when a spec
// field is set, and field names that field ("" when the rule is conditional in a way the
// facts do not hold: on a value, on several fields, or excluding kinds rather than listing
// them); body is the part of the rule that names the kinds. A rule that is not ruled
// restricts every policy's targets. The two forms read: `!has(self.f) || <rule>` (Envoy
// Gateway, kgateway) and `has(self.f) && has(self.targetRefs) ? <rule> : true`
// (agentgateway), where a condition on target fields alone is no condition.
func fieldOfRule(r string) (field, body string, ruled bool) {
	if fm := fieldRule.FindStringSubmatch(r); fm != nil && !isTargetField(fm[1]) {
		rest := r[len(fm[0]):]
		if notExists.MatchString(rest) || strings.Contains(rest, "!has(self."+fm[1]+".") {
			return "", rest, true
		}
		return fm[1], rest, true
	}
	m := ifThen.FindStringSubmatch(r)
	if m == nil {
		return "", r, false
	}
	cond, body := m[1], m[2]
	if !hasOnly.MatchString(cond) {
		return "", body, true // a condition on a value (agentgateway's traffic.phase)
	}
	var fields []string
	for _, a := range hasAtom.FindAllStringSubmatch(cond, -1) {
		if !isTargetField(a[1]) {
			fields = append(fields, a[1])
		}
	}
	switch {
	case len(fields) == 0:
		return "", body, false
	case len(fields) == 1 && !notExists.MatchString(body):
		return fields[0], body, true
	default:
		return "", body, true
	}
}

func isTargetField(name string) bool {
	for _, t := range TargetFields {
		if t == name {
			return true
		}
	}
	return false
}

// walkRefs finds the objects with name and kind below s, at path. inherited are the CEL
// rules of the enclosing schemas that speak of s (an object's rules that name the
// property, an array's rules for its items).
func walkRefs(s map[string]any, path string, inherited []string, depth int, out *[]Ref) {
	if s == nil || depth > 24 {
		return
	}
	own := rulesOf(s)
	if items := m(s["items"]); items != nil {
		walkRefs(items, path+"[]", append(inherited, own...), depth+1, out)
		return
	}
	props := m(s["properties"])
	if props == nil {
		return
	}
	_, hasName := props["name"]
	kind, hasKind := props["kind"]
	if hasName && hasKind {
		_, ns := props["namespace"]
		ref := Ref{Path: path, Namespaced: ns}
		set := map[string]bool{}
		for _, k := range enumKinds(m(kind)) {
			set[k] = true
		}
		for _, r := range append(append([]string{}, inherited...), own...) {
			if restrictsKinds(r) {
				for _, mm := range quotedKind.FindAllStringSubmatch(r, -1) {
					set[mm[1]] = true
				}
			}
		}
		ref.Kinds = keys(set)
		*out = append(*out, ref)
		return
	}
	for name, child := range props {
		if forbidden(own, name) {
			continue // the CRD refuses the field whenever it is set: nothing it names is read
		}
		var down []string
		for _, r := range own {
			if strings.Contains(r, "self."+name) {
				down = append(down, r)
			}
		}
		walkRefs(m(child), path+"."+name, down, depth+1, out)
	}
}

// enumKinds are the kinds a kind field's enum, or a pattern that only lists kinds, admits.
func enumKinds(s map[string]any) []string {
	var out []string
	for _, e := range list(s["enum"]) {
		if k, ok := e.(string); ok {
			out = append(out, k)
		}
	}
	if p, _ := s["pattern"].(string); p != "" {
		if mm := literalKinds.FindStringSubmatch(p); mm != nil {
			out = append(out, strings.Split(mm[1], "|")...)
		}
	}
	return out
}

func rulesOf(s map[string]any) []string {
	var out []string
	for _, v := range list(s["x-kubernetes-validations"]) {
		if r, _ := m(v)["rule"].(string); r != "" {
			out = append(out, r)
		}
	}
	return out
}

func intOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case int64:
		return int(x)
	}
	return 0
}

func keys(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedSet(in []string) []string {
	set := map[string]bool{}
	for _, s := range in {
		set[s] = true
	}
	return keys(set)
}

// forbidden reports a rule among rules that refuses the property name whenever it is set
// (Envoy Gateway's "BackendRefs must be used, backendRef is not supported.":
// !has(self.backendRef)).
func forbidden(rules []string, name string) bool {
	for _, r := range rules {
		if strings.ReplaceAll(r, " ", "") == "!has(self."+name+")" {
			return true
		}
	}
	return false
}

// restrictsKinds reports a rule that speaks of the reference's kind to limit it, not one
// that only asks more of some kind (Envoy Gateway's "Must have port for Service
// reference": (size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true).
func restrictsKinds(rule string) bool {
	if !strings.Contains(rule, "kind") {
		return false
	}
	r := strings.TrimSpace(rule)
	if i := strings.Index(r, "?"); i >= 0 && strings.HasSuffix(strings.ReplaceAll(r, " ", ""), ":true") {
		return strings.Contains(r[i:], "kind")
	}
	return true
}
