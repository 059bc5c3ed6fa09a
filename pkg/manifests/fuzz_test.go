package manifests

import (
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary files to the manifest reader: it returns documents or an
// InputError naming the file, and never crashes.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: n}}\n",
		"{\"apiVersion\":\"v1\",\"kind\":\"Service\"}\n{\"apiVersion\":\"v1\",\"kind\":\"Service\"}",
		"kind: List\napiVersion: v1\nitems: [1, 2]\n", "---\n---\n", "a: &a [*a, *a]\n", "- - - -\n", "\t\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := Decode("fuzz.yaml", data)
		var input *InputError
		if err != nil && !errors.As(err, &input) {
			t.Fatalf("error of an unexpected type: %T %v", err, err)
		}
		for _, d := range docs {
			if d.Object["kind"] == nil || d.Object["apiVersion"] == nil {
				t.Fatalf("document without kind or apiVersion passed: %v", d.Object)
			}
		}
	})
}
