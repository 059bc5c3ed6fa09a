package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/internal/intern"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Policy is one policy object as the rules see it: its identity, its decoded target
// references and its spec as generic JSON, interpreted through its kind row.
type Policy struct {
	Row       *kinds.KindRow
	Namespace string
	Name      string
	// UID is metadata.uid: the API server sets it before validating admission, so a review
	// and the watch events of the object it admitted carry the same one.
	UID string
	// Version is the API version of apiVersion (v1, v1alpha1, ...), as the object was
	// written: reports name the policy with it.
	Version string
	// Created is metadata.creationTimestamp; older is higher at one level (GEP-713).
	Created time.Time
	// Rank is the integer value of the row's order annotation or field (0 when the kind has
	// none, or the policy sets none or no integer, as the implementations default it): they
	// apply the policies at one point by ascending rank, then by age, so where two set the
	// same thing the greater rank wins.
	Rank int64
	// spec is the spec as generic JSON; encodedSpec is the same spec as compact JSON in a
	// policy made by Compact, which keeps no generic spec. Read both through Spec().
	spec        map[string]any
	encodedSpec string

	// TargetRefs are the well-formed-enough references (group/kind/name are strings).
	TargetRefs []TargetRef
	// decodeErrs are shape errors found while decoding (a targetRefs that is not a list).
	decodeErrs field.ErrorList
	// selectors are the well-formed target selectors (TargetSelectors).
	selectors []TargetSelector
	// hasTargetRef, hasTargetRefs and hasTargetSelectors record which target fields were
	// present.
	hasTargetRef, hasTargetRefs, hasTargetSelectors bool
}

// pairwiseUpTo is how many keys are compared pairwise before a set is worth building.
const pairwiseUpTo = 32

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

// HasTargetRef, HasTargetRefs and HasTargetSelectors report which target fields the spec
// sets (targetSelectors: a non-empty list).
func (p *Policy) HasTargetRef() bool       { return p.hasTargetRef }
func (p *Policy) HasTargetRefs() bool      { return p.hasTargetRefs }
func (p *Policy) HasTargetSelectors() bool { return p.hasTargetSelectors }

// DecodeErrors returns the shape errors found while decoding the target references (a
// targetRefs that is not a list, a name that is not a string), each a copy the caller may
// change: a policy can be judged twice (the webhook judges again when the state moved), and
// each verdict puts its reason on its own errors.
func (p *Policy) DecodeErrors() field.ErrorList {
	if len(p.decodeErrs) == 0 {
		return nil
	}
	out := make(field.ErrorList, len(p.decodeErrs))
	for i, e := range p.decodeErrs {
		c := *e
		out[i] = &c
	}
	return out
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
	if ref.HasNamespace && ref.Namespace != "" { // an empty one is denied, or (Istio's rule) means its own
		ns = ref.Namespace
	}
	if info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}); info.Scope == kinds.Cluster {
		ns = ""
	}
	return TargetKey{Group: ref.Group, Kind: ref.Kind, Namespace: ns, Name: ref.Name, Section: ref.SectionName}
}

// Higher reports whether p ranks above q at one level of the hierarchy (GEP-713 conflict
// resolution: the older creationTimestamp, then {namespace}/{name} alphabetically), after
// the rank where the kind has one: a lesser rank is applied first, so it is the higher of
// the two (and a default the lower one overrides).
func (p *Policy) Higher(q *Policy) bool {
	if p.Rank != q.Rank {
		return p.Rank < q.Rank
	}
	if !p.Created.Equal(q.Created) {
		return p.Created.Before(q.Created)
	}
	return p.Ref() < q.Ref()
}

// TooManyTargetRefs reports whether the policy names more targets than its kind allows.
func (p *Policy) TooManyTargetRefs() bool { return len(p.TargetRefs) > p.Row.MaxRefs() }

// NewPolicy decodes a policy object (generic JSON, as from an AdmissionReview) for row.
// It never fails: shape problems are kept and reported by the target reference rule.
func NewPolicy(row *kinds.KindRow, obj map[string]any) *Policy {
	p := newPolicy(row)
	meta, _ := obj["metadata"].(map[string]any)
	p.Namespace, _ = meta["namespace"].(string)
	p.Name, _ = meta["name"].(string)
	p.UID, _ = meta["uid"].(string)
	if apiVersion, ok := obj["apiVersion"].(string); ok {
		_, version, _ := strings.Cut(apiVersion, "/")
		if version == "" {
			version = apiVersion
		}
		p.Version = intern.String(version)
	}
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
		p.decodeErrs = append(p.decodeErrs, field.Invalid(specPath, DescribeValue(spec), "must be an object"))
	}
	p.decodeTargetRefs()
	p.TargetRefs = slices.Clip(p.TargetRefs) // see policyWithRef
	p.Rank = rankOf(row, meta, p.spec)
	return p
}

// rankOf reads the row's order annotation or top-level order field.
func rankOf(row *kinds.KindRow, meta, spec map[string]any) int64 {
	var v any
	switch {
	case row.Conflicts.OrderAnnotation != "":
		annotations, _ := meta["annotations"].(map[string]any)
		v = annotations[row.Conflicts.OrderAnnotation]
	case row.Conflicts.OrderField != "":
		v = spec[row.Conflicts.OrderField]
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n)
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
			return i
		}
	}
	return 0
}

// policyWithRef is a policy with room for its first target reference: most policies have
// one, and its own one-entry array was one more object per policy for the collector to visit
// on every cycle (and one more allocation per review). A longer list moves out as append
// does; NewPolicy clips the list, so nothing appended later can write into the room.
type policyWithRef struct {
	Policy
	firstRef [1]TargetRef
}

func newPolicy(row *kinds.KindRow) *Policy {
	both := &policyWithRef{}
	both.Row = row
	both.TargetRefs = both.firstRef[:0]
	return &both.Policy
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
	if list, ok := p.spec["targetSelectors"].([]any); ok && len(list) > 0 {
		p.hasTargetSelectors = true
		if p.Row.HasTargetRefField("targetSelectors") {
			p.decodeTargetSelectors(list)
		}
	}
	// A field the row does not list is reported as unsupported (InvalidTargetRef) and its
	// references are not decoded: the implementation never reads them (the API server prunes
	// a field the CRD does not have), so no other rule judges them (a Conflicted or
	// RefNotPermitted on a policy already denied for the field), and they reach nothing.
	if raw, ok := p.spec["targetRef"]; ok && raw != nil {
		p.hasTargetRef = true
		if p.Row.HasTargetRefField("targetRef") {
			p.decodeSingleRef(raw)
		}
	}
	if raw, ok := p.spec["targetRefs"]; ok && raw != nil {
		p.hasTargetRefs = true
		if p.Row.HasTargetRefField("targetRefs") {
			p.decodeRefList(raw)
		}
	}
}

func (p *Policy) decodeSingleRef(raw any) {
	if m, ok := raw.(map[string]any); ok {
		p.TargetRefs = append(p.TargetRefs, p.decodeRef(m, targetRefPath))
	} else {
		p.decodeErrs = append(p.decodeErrs, field.Invalid(targetRefPath, DescribeValue(raw), "must be an object with `group`, `kind` and `name`"))
	}
}

func (p *Policy) decodeRefList(raw any) {
	list, ok := raw.([]any)
	if !ok {
		p.decodeErrs = append(p.decodeErrs, field.Invalid(targetRefsPath, DescribeValue(raw), "must be a list of references"))
		return
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			p.decodeErrs = append(p.decodeErrs, field.Invalid(targetRefsEntry(i), DescribeValue(item), "must be an object with `group`, `kind` and `name`"))
			continue
		}
		p.TargetRefs = append(p.TargetRefs, p.decodeRef(m, targetRefsEntry(i)))
	}
}

func (p *Policy) decodeRef(m map[string]any, path *field.Path) TargetRef {
	ref := TargetRef{Path: path}
	// A spelling of the core group the implementation reads as "" is "" here too, so the
	// reference finds its target and its conflicts as the implementation's does.
	ref.Group = p.Row.CoreGroup(p.stringField(m, "group", path))
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
		p.decodeErrs = append(p.decodeErrs, field.Invalid(path.Child(key), DescribeValue(v), "must be a string"))
		return ""
	}
}

// MaxEcho is the longest string of a requester's a message repeats whole: the longest any
// field it could come from may validly hold (an object name, a group, a sectionName).
const MaxEcho = 253

// echoPrefix is how much of a longer string a message repeats.
const echoPrefix = 64

// Echo returns a string of the requester's (a name, a kind, a sectionName, a value) as a
// message may repeat it: whole up to MaxEcho bytes, otherwise its first 64 bytes, cut at a
// character boundary, and its length, as `aaaa... (1048576 bytes)`. A megabyte name then
// costs a line of each denial, warning and annotation that names it, not a megabyte.
func Echo(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := echoPrefix
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// DescribeValue renders a bad value compactly for a message.
func DescribeValue(v any) string {
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

// UniqueKeys returns the distinct attachment points of a policy. A policy names a handful,
// compared pairwise; a set is built only for a long list (a review can hold thousands of
// references, and pairwise that would be quadratic).
func (p *Policy) UniqueKeys() []TargetKey {
	out := make([]TargetKey, 0, len(p.TargetRefs))
	var seen map[TargetKey]struct{}
	if len(p.TargetRefs) > pairwiseUpTo {
		seen = make(map[TargetKey]struct{}, len(p.TargetRefs))
	}
	for _, ref := range p.TargetRefs {
		k := p.Key(ref)
		if seen != nil {
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
		} else if slices.Contains(out, k) {
			continue
		}
		out = append(out, k)
	}
	return out
}
