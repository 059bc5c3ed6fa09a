package crdfacts

import (
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// CRD is one CustomResourceDefinition as the comparison reads it: from a file an
// implementation ships (test/kindsdrift) or from the API server (pkg/clusterstate).
type CRD struct {
	Group, Kind string
	// Name is metadata.name (plural.group).
	Name string
	// File is where it was read from, relative to its module's root ("" from a cluster).
	File string
	// Served lists the served versions in the CRD's order; Storage is the stored one.
	Served  []string
	Storage string
	// Schemas holds each version's openAPIV3Schema.
	Schemas map[string]map[string]any
	// Release is the release the CRD says it comes from, where it says one (Release).
	Release string
	// PolicyLabel is the value of its gateway.networking.k8s.io/policy label ("" when it has
	// none): the label by which `webhook serve` discovers policy kinds.
	PolicyLabel string
}

// releaseMarks are where a CRD says which release installed it, in the order they are
// read: Gateway API's bundle annotation (every CRD of its config/crd), then the labels
// Helm charts put on the CRDs they template (Envoy Gateway's gateway-crds-helm:
// helm.sh/chart "gateway-crds-helm-v1.9.1", app.kubernetes.io/version).
var releaseMarks = []struct {
	annotation bool
	key        string
}{
	{annotation: true, key: "gateway.networking.k8s.io/bundle-version"},
	{key: "helm.sh/chart"},
	{key: "app.kubernetes.io/version"},
}

// FromObject reads a CustomResourceDefinition given as generic JSON.
func FromObject(obj map[string]any) *CRD {
	spec := m(obj["spec"])
	meta := m(obj["metadata"])
	c := &CRD{Schemas: map[string]map[string]any{}}
	c.Group, _ = spec["group"].(string)
	c.Kind, _ = m(spec["names"])["kind"].(string)
	c.Name, _ = meta["name"].(string)
	c.PolicyLabel, _ = m(meta["labels"])[kinds.PolicyLabel].(string)
	for _, mark := range releaseMarks {
		from := m(meta["labels"])
		if mark.annotation {
			from = m(meta["annotations"])
		}
		if v, _ := from[mark.key].(string); strings.TrimSpace(v) != "" {
			c.Release = mark.key + "=" + strings.TrimSpace(v)
			break
		}
	}
	for _, v := range list(spec["versions"]) {
		vm := m(v)
		name, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); served {
			c.Served = append(c.Served, name)
		}
		if storage, _ := vm["storage"].(bool); storage {
			c.Storage = name
		}
		c.Schemas[name] = m(m(vm["schema"])["openAPIV3Schema"])
	}
	return c
}

func m(v any) map[string]any { x, _ := v.(map[string]any); return x }
func list(v any) []any       { x, _ := v.([]any); return x }

// Targetless says no version of the CRD can name a target (kinds.TargetlessSchema of each):
// labelled as a policy kind, it is still none the webhook judges (kinds.CRDRow.Targetless).
func (c *CRD) Targetless() bool {
	for _, schema := range c.Schemas {
		if !kinds.TargetlessSchema(schema) {
			return false
		}
	}
	return len(c.Schemas) > 0
}
