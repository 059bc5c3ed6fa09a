package apiserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// scenario is one corpus file: its header lines and its documents, the policies (the
// objects its `# expect:` lines name) apart from the rest.
type scenario struct {
	expect, config []string
	// crds is the `# crds:` header: "none" for a scenario judged without CRDs.
	crds     []string
	objects  []document // in document order
	policies []document // in document order
}

// document is one object of a scenario, as written.
type document struct {
	raw []byte
	obj *unstructured.Unstructured
}

// key is "Kind namespace/name" as `# expect:` lines write it; namespace is "" until the
// object's scope is known (resolveNamespaces).
func (d document) key() string {
	return d.obj.GetKind() + " " + d.obj.GetNamespace() + "/" + d.obj.GetName()
}

// readScenario reads a corpus file. A document that names no namespace is in "default"
// when its kind is namespaced (isNamespaced), as `webhook check` and kubectl read it.
func readScenario(t *testing.T, file string, isNamespaced func(*unstructured.Unstructured) bool) scenario {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	header := readHeader(data)
	sc := scenario{expect: header["expect"], config: header["config"], crds: header["crds"]}
	policies := map[string]bool{}
	for _, line := range sc.expect {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, "an expect line is `VERDICT Kind namespace/name [reasons]`: %q", line)
		policies[f[1]+" "+f[2]] = true
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		js, err := yaml.YAMLToJSON(raw)
		require.NoError(t, err)
		if string(bytes.TrimSpace(js)) == "null" {
			continue // a document of comments only
		}
		obj := &unstructured.Unstructured{}
		require.NoError(t, obj.UnmarshalJSON(js))
		if obj.GetNamespace() == "" && isNamespaced(obj) {
			obj.SetNamespace("default")
		}
		d := document{raw: raw, obj: obj}
		if policies[d.key()] {
			sc.policies = append(sc.policies, d)
		} else {
			sc.objects = append(sc.objects, d)
		}
	}
	require.Len(t, sc.policies, len(sc.expect), "each `# expect:` line names one policy of the scenario")
	return sc
}

// readHeader reads the leading `# key: value` comment lines of a scenario.
func readHeader(data []byte) map[string][]string {
	out := map[string][]string{}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ": "); ok && !strings.Contains(key, " ") {
			out[key] = append(out[key], strings.TrimSpace(value))
		}
	}
	return out
}

// namespaces are the namespaces the scenario's objects live in, "default" always.
func (sc scenario) namespaces() []string {
	seen := map[string]bool{"default": true}
	out := []string{"default"}
	for _, d := range append(append([]document{}, sc.objects...), sc.policies...) {
		if ns := d.obj.GetNamespace(); ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}
