package topology

import (
	"iter"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/internal/intern"
)

// encodeLabels writes a label set as keys and values each ended by a NUL, sorted by key,
// interned. Labels whose value is not a string, or that hold a NUL, are not kept: the API
// server admits neither, so only a hand-written manifest has them, and it selects nothing.
func encodeLabels(set map[string]any) string {
	if len(set) == 0 {
		return ""
	}
	keys := make([]string, 0, len(set))
	for k, v := range set {
		if s, ok := v.(string); ok && !strings.Contains(k, "\x00") && !strings.Contains(s, "\x00") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(set[k].(string))
		b.WriteByte(0)
	}
	return intern.String(b.String())
}

// Labels are an object's labels as a k8s.io/apimachinery labels.Labels, read in place. It
// holds the object, one pointer, so passing it as an interface allocates nothing.
type Labels struct{ o *Object }

// Has reports whether the object carries the label key.
func (l Labels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

// Get returns the value of the label key ("" when absent).
func (l Labels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

// Lookup returns the value of the label key and whether the object carries it.
func (l Labels) Lookup(key string) (string, bool) {
	for k, v := range l.All() {
		if k == key {
			return v, true
		}
	}
	return "", false
}

// All yields each label's key and value, in key order.
func (l Labels) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if l.o == nil {
			return
		}
		for rest := l.o.labels; rest != ""; {
			var k, v string
			k, rest, _ = strings.Cut(rest, "\x00")
			v, rest, _ = strings.Cut(rest, "\x00")
			if !yield(k, v) {
				return
			}
		}
	}
}

// Labels returns the object's labels.
func (o *Object) Labels() Labels { return Labels{o} }
