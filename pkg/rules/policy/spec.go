package policy

import (
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/policyattachment/webhook/internal/exactjson"
	"github.com/policyattachment/webhook/internal/intern"
)

// Spec returns the policy's spec as generic JSON. A compact policy (Compact) keeps its spec
// as JSON text and decodes a fresh copy at each call, so callers read it once per
// computation (merge.Cache holds the blocks of each policy met on many paths). Callers
// must not change what it returns.
func (p *Policy) Spec() map[string]any {
	if p.spec != nil || p.encodedSpec == "" {
		return p.spec
	}
	var v exactjson.Value // integers come back as the int64s they were, not rounded float64s
	if err := jsonv2.Unmarshal([]byte(p.encodedSpec), &v, encodedSpecOptions); err != nil {
		// Compact only keeps what it encoded itself, so this cannot happen; an empty spec
		// judges nothing rather than judging wrongly.
		return map[string]any{}
	}
	spec, _ := v.V.(map[string]any)
	return spec
}

// encodedSpecOptions read and write encoded specs: a string with invalid UTF-8 was already
// replaced by U+FFFD when the review was read, and the same spec always encodes the same way.
var encodedSpecOptions = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsonv2.Deterministic(true))

// Compact returns a copy of p made for long keeping (a snapshot holds thousands of
// policies for the life of the process); p itself is left as it is. The collector's work
// on every cycle grows with the objects the heap holds, and a decoded policy is dozens
// of them, so in the copy:
//   - the generic spec, a map of maps, is compact JSON (Spec decodes it again);
//   - the name, UID, references' names and that JSON are slices of one string;
//   - the namespace and the references' groups, kinds, namespaces and sections, which
//     repeat across thousands of policies, are interned.
//
// One string is one object the collector marks and never scans. A spec that JSON cannot
// encode (a NaN from YAML) cannot be compacted: Compact then returns p.
func (p *Policy) Compact() *Policy {
	if p.spec == nil {
		return p
	}
	encoded, err := jsonv2.Marshal(p.spec, encodedSpecOptions)
	if err != nil {
		return p
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

	c := newPolicy(p.Row)
	refs := append(c.TargetRefs, p.TargetRefs...)
	*c = *p
	c.TargetRefs = refs[:len(refs):len(refs)] // clipped, see policyWithRef
	c.Name, c.UID = next(len(p.Name)), next(len(p.UID))
	for i := range c.TargetRefs {
		ref := &c.TargetRefs[i]
		ref.Name = next(len(ref.Name))
		ref.Group, ref.Kind, ref.Namespace, ref.SectionName = intern.String(ref.Group), intern.String(ref.Kind), intern.String(ref.Namespace), intern.String(ref.SectionName)
	}
	c.Namespace = intern.String(p.Namespace)
	c.encodedSpec, c.spec = text, nil
	return c
}
