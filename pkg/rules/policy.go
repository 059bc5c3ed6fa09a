package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Policy is one policy object as the rules see it: its identity, its decoded target
// references and its spec as generic JSON, interpreted through its kind row.
type Policy struct {
	Row       *KindRow
	Namespace string
	Name      string
	// UID is metadata.uid: the API server sets it before validating admission, so a review
	// and the watch events of the object it admitted carry the same one.
	UID string
	// Created is metadata.creationTimestamp; older is higher at one level (GEP-713).
	Created time.Time
	// spec is the spec as generic JSON while the policy is being judged; storedSpec is the
	// same spec as compact JSON once a snapshot holds the policy (freeze). Read both through
	// Spec().
	spec       map[string]any
	storedSpec string

	// TargetRefs are the well-formed-enough references (group/kind/name are strings).
	TargetRefs []TargetRef
	// decodeErrs are shape errors found while decoding (a targetRefs that is not a list).
	decodeErrs field.ErrorList
	// hasTargetRef and hasTargetRefs record which of the two fields were present.
	hasTargetRef, hasTargetRefs bool
	// alone holds the policy itself once a snapshot stores it: the one-entry list of the
	// policy index at an attachment point where no other policy of its kind is. Its
	// capacity is 1, so a second policy there makes the list move out, and nothing but
	// the snapshot writes it.
	alone [1]*Policy
}

// TargetRef is one entry of spec.targetRefs (or the single spec.targetRef).
type TargetRef struct {
	Group        string
	Kind         string
	Name         string
	Namespace    string
	HasNamespace bool
	SectionName  string
	HasSection   bool
	// Path is where the reference sits in the object, for error messages.
	Path *field.Path
}

// TargetKey identifies one attachment point: an object, or a named section of one.
type TargetKey struct {
	Group, Kind, Namespace, Name, Section string
}

// String renders the key the way messages and annotations name targets.
func (k TargetKey) String() string {
	s := k.Kind + " " + k.Namespace + "/" + k.Name
	if k.Namespace == "" {
		s = k.Kind + " " + k.Name
	}
	if k.Section != "" {
		s += " section " + k.Section
	}
	return s
}

// Object returns the key without its section.
func (k TargetKey) Object() TargetKey {
	k.Section = ""
	return k
}

// GroupKind of the policy.
func (p *Policy) GroupKind() schema.GroupKind { return p.Row.GroupKind() }

// Ref is "namespace/name", the form GEP-713 orders ties by and our outputs use.
func (p *Policy) Ref() string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

// Key returns the attachment point a reference resolves to, defaulting the namespace to
// the policy's own (cluster-scoped targets have none).
func (p *Policy) Key(ref TargetRef) TargetKey {
	ns := p.Namespace
	if ref.HasNamespace {
		ns = ref.Namespace
	}
	if info, _ := TargetInfoFor(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}); info.Scope == Cluster {
		ns = ""
	}
	return TargetKey{Group: ref.Group, Kind: ref.Kind, Namespace: ns, Name: ref.Name, Section: ref.SectionName}
}

// Higher reports whether p ranks above q at one level of the hierarchy (GEP-713 conflict
// resolution: the older creationTimestamp, then {namespace}/{name} alphabetically).
func (p *Policy) Higher(q *Policy) bool {
	if !p.Created.Equal(q.Created) {
		return p.Created.Before(q.Created)
	}
	return p.Ref() < q.Ref()
}

// TooManyTargetRefs reports whether the policy names more targets than its kind allows.
func (p *Policy) TooManyTargetRefs() bool { return len(p.TargetRefs) > p.Row.MaxRefs() }

// NewPolicy decodes a policy object (generic JSON, as from an AdmissionReview) for row.
// It never fails: shape problems are kept and reported by the target reference rule.
func NewPolicy(row *KindRow, obj map[string]any) *Policy {
	p := newPolicy(row)
	meta, _ := obj["metadata"].(map[string]any)
	p.Namespace, _ = meta["namespace"].(string)
	p.Name, _ = meta["name"].(string)
	p.UID, _ = meta["uid"].(string)
	if ts, ok := meta["creationTimestamp"].(string); ok {
		p.Created, _ = time.Parse(time.RFC3339, ts)
	}
	switch spec := obj["spec"].(type) {
	case map[string]any:
		p.spec = spec
	case nil:
		p.spec = map[string]any{}
	default:
		p.spec = map[string]any{}
		p.decodeErrs = append(p.decodeErrs, field.Invalid(specPath, describe(spec), "must be an object"))
	}
	p.decodeTargetRefs()
	p.TargetRefs = slices.Clip(p.TargetRefs) // see policyWithRef
	return p
}

// policyWithRef is a policy with room for its first target reference: most policies have
// one, and its own one-entry array was one more object per policy for the collector to visit
// on every cycle (and one more allocation per review). A longer list moves out as append
// does; NewPolicy clips the list, so nothing appended later can write into the room.
type policyWithRef struct {
	Policy
	firstRef [1]TargetRef
}

func newPolicy(row *KindRow) *Policy {
	both := &policyWithRef{}
	both.Row = row
	both.TargetRefs = both.firstRef[:0]
	return &both.Policy
}

// Spec returns the policy's spec as generic JSON. A stored policy keeps its spec as compact
// JSON (freeze) and decodes a fresh copy at each call, so callers read it once per
// computation (UnitCache holds the blocks of each policy met on many paths). Callers must
// not change what it returns.
func (p *Policy) Spec() map[string]any {
	if p.spec != nil || p.storedSpec == "" {
		return p.spec
	}
	var spec map[string]any
	if err := jsonv2.Unmarshal([]byte(p.storedSpec), &spec, storedSpecOptions); err != nil {
		// freeze only keeps what it encoded itself, so this cannot happen; an empty spec
		// judges nothing rather than judging wrongly.
		return map[string]any{}
	}
	return spec
}

// storedSpecOptions read and write stored specs: a string with invalid UTF-8 was already
// replaced by U+FFFD when the review was read, and the same spec always encodes the same way.
var storedSpecOptions = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsonv2.Deterministic(true))

// freeze readies a policy for a snapshot's keeping. The collector's work on every cycle
// grows with the objects the snapshot holds, and a decoded policy is dozens of them:
//   - the generic spec, a map of maps, becomes compact JSON (Spec decodes it again);
//   - its name, UID, references' names and that JSON, each its own string as decoded,
//     become slices of one string;
//   - the namespace and the references' groups, kinds, namespaces and sections, which
//     repeat across thousands of policies, are interned.
//
// One string is one object the collector marks and never scans: that marking, not the
// verdicts, is what the webhook's latency tail was made of. A spec that JSON cannot
// encode (a NaN from YAML) leaves the policy as it is.
func (p *Policy) freeze() {
	if p.spec == nil {
		return
	}
	encoded, err := jsonv2.Marshal(p.spec, storedSpecOptions)
	if err != nil {
		return
	}
	size := len(p.Name) + len(p.UID) + len(encoded)
	for _, ref := range p.TargetRefs {
		size += len(ref.Name)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(p.Name)
	b.WriteString(p.UID)
	for _, ref := range p.TargetRefs {
		b.WriteString(ref.Name)
	}
	b.Write(encoded)
	text := b.String()
	next := func(n int) string {
		s := text[:n]
		text = text[n:]
		return s
	}
	p.Name, p.UID = next(len(p.Name)), next(len(p.UID))
	for i := range p.TargetRefs {
		ref := &p.TargetRefs[i]
		ref.Name = next(len(ref.Name))
		ref.Group, ref.Kind, ref.Namespace, ref.SectionName = intern(ref.Group), intern(ref.Kind), intern(ref.Namespace), intern(ref.SectionName)
	}
	p.Namespace = intern(p.Namespace)
	p.storedSpec, p.spec = text, nil
}

// The paths of spec, spec.targetRef and the first targetRefs entries, shared by every policy
// (a field.Path is never changed once built): the snapshot keeps thousands of policies, and
// three path nodes per reference were objects the garbage collector visited on every cycle.
var (
	specPath          = field.NewPath("spec")
	targetRefPath     = specPath.Child("targetRef")
	targetRefsPath    = specPath.Child("targetRefs")
	targetRefsIndexed = func() (out [16]*field.Path) {
		for i := range out {
			out[i] = targetRefsPath.Index(i)
		}
		return out
	}()
)

// targetRefsEntry is the path of spec.targetRefs[i].
func targetRefsEntry(i int) *field.Path {
	if i < len(targetRefsIndexed) {
		return targetRefsIndexed[i]
	}
	return targetRefsPath.Index(i)
}

func (p *Policy) decodeTargetRefs() {
	if raw, ok := p.spec["targetRef"]; ok && raw != nil {
		p.hasTargetRef = true
		path := targetRefPath
		if m, ok := raw.(map[string]any); ok {
			p.TargetRefs = append(p.TargetRefs, p.decodeRef(m, path))
		} else {
			p.decodeErrs = append(p.decodeErrs, field.Invalid(path, describe(raw), "must be an object with `group`, `kind` and `name`"))
		}
	}
	if raw, ok := p.spec["targetRefs"]; ok && raw != nil {
		p.hasTargetRefs = true
		path := targetRefsPath
		list, ok := raw.([]any)
		if !ok {
			p.decodeErrs = append(p.decodeErrs, field.Invalid(path, describe(raw), "must be a list of references"))
			return
		}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				p.decodeErrs = append(p.decodeErrs, field.Invalid(targetRefsEntry(i), describe(item), "must be an object with `group`, `kind` and `name`"))
				continue
			}
			p.TargetRefs = append(p.TargetRefs, p.decodeRef(m, targetRefsEntry(i)))
		}
	}
}

func (p *Policy) decodeRef(m map[string]any, path *field.Path) TargetRef {
	ref := TargetRef{Path: path}
	ref.Group = p.stringField(m, "group", path)
	ref.Kind = p.stringField(m, "kind", path)
	ref.Name = p.stringField(m, "name", path)
	if _, ok := m["namespace"]; ok {
		ref.HasNamespace = true
		ref.Namespace = p.stringField(m, "namespace", path)
	}
	if _, ok := m["sectionName"]; ok {
		ref.HasSection = true
		ref.SectionName = p.stringField(m, "sectionName", path)
	}
	return ref
}

func (p *Policy) stringField(m map[string]any, key string, path *field.Path) string {
	switch v := m[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		p.decodeErrs = append(p.decodeErrs, field.Invalid(path.Child(key), describe(v), "must be a string"))
		return ""
	}
}

// describe renders a bad value compactly for a message.
func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "<object>"
	case []any:
		return "<list>"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 64 {
		s = s[:61] + "..."
	}
	return s
}
