package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// These tests read the policy's own fields, so they are in package policy and cannot use
// rulestest (which imports the index, which imports this package): policyOf is its short
// form here.

// policyOf decodes a policy document with its row from table.
func policyOf(t testing.TB, table *kinds.KindTable, doc string) *Policy {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	require.NoError(t, err)
	row, ok := table.Lookup(schema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)})
	require.True(t, ok, "no row for %v", obj["kind"])
	return NewPolicy(row, obj)
}

// roundTrip is v after a JSON round trip, so values read from YAML (int64) and from JSON
// (float64) compare equal.
func roundTrip(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
