package topology

import (
	"strconv"

	"github.com/policyattachment/webhook/internal/intern"
)

// Readers of generic JSON fields, for parsing objects once into their topology.

func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func listAny(v any) []any {
	items, _ := v.([]any)
	return items
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a JSON number from YAML (int64) or JSON (float64).
func num(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// orDefault reads a string field, with a default when it is absent (but not when empty:
// `group: ""` is the core group).
func orDefault(m map[string]any, key, def string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return def
	}
	return intern.String(str(v))
}
