package crdvalidation

import "encoding/json"

// jsonCopy deep-copies a JSON-like value into the types the API server decodes JSON to
// (int64, float64, string, bool, nil, maps and slices of them), so that the schema and CEL
// see what they would see on the wire even when the object was built in Go with ints.
func jsonCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonCopy(x)
		}
		return out
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v // int64, float64, string, bool, nil
	}
}
