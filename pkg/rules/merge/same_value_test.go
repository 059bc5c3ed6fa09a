package merge

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/internal/exactjson"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// sameValueByRoundTrip is what sameValue computed before it walked JSON shapes itself: a
// deep comparison, then one of both values after a JSON round trip. sameValue must give
// its answer for every pair.
func sameValueByRoundTrip(a, b any) bool {
	return reflect.DeepEqual(a, b) || reflect.DeepEqual(normalize(a), normalize(b))
}

func TestSameValueAgreesWithAJSONRoundTrip(t *testing.T) {
	shared := map[string]any{"x": math.NaN()}
	values := []any{
		nil, true, false, "", "red", "blue", "\xff", "\xfe", "\ufffd",
		float64(0), math.Copysign(0, -1), float64(1), int64(1), 1, int32(1), uint64(1), float64(1.5),
		int64(1 << 53), int64(1<<53 + 1), float64(1 << 53), uint64(math.MaxUint64), float64(math.MaxUint64),
		float32(0.1), float64(0.1), float64(float32(0.1)), int8(1),
		math.NaN(), math.Inf(1), math.Inf(-1),
		map[string]any(nil), map[string]any{}, []any(nil), []any{},
		map[string]any{"light": "red"}, map[string]any{"light": "blue"}, map[string]any{"dark": "red"},
		map[string]any{"light": "red", "dark": "blue"},
		map[string]any{"port": int64(80)}, map[string]any{"port": float64(80)}, map[string]any{"port": float64(81)},
		map[string]any{"port": int64(80), "c": make(chan int)}, map[string]any{"port": float64(80), "c": make(chan int)},
		map[string]any{"a": map[string]any(nil)}, map[string]any{"a": nil}, map[string]any{"a": map[string]any{}},
		map[string]any{"x": math.Inf(1), "n": int64(1)}, map[string]any{"x": math.Inf(1), "n": float64(1)},
		shared, map[string]any{"x": math.NaN()},
		[]any{"a", int64(2)}, []any{"a", float64(2)}, []any{"a", float64(3)}, []any{int64(2), "a"}, []any{nil},
		[]string{"a"}, []any{"a"}, map[string]string{"light": "red"},
		struct{ Light string }{"red"}, map[string]any{"Light": "red"},
	}
	for i, a := range values {
		for j, b := range values {
			want := sameValueByRoundTrip(a, b)
			assert.Equal(t, want, SameValue(a, b), "values %d and %d: %s and %s", i, j, show(a), show(b))
		}
	}
	assert.True(t, SameValue(shared, shared), "a map is the same as itself, NaN and all, as DeepEqual says")
}

func show(v any) string { return fmt.Sprintf("%T %#v", v, v) }

// The walk answers the generic JSON shapes itself: it must not reach the round trip for them.
func TestSameJSONAnswersGenericShapes(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		same bool
	}{
		{map[string]any{"colors": map[string]any{"light": "red"}}, map[string]any{"colors": map[string]any{"light": "blue"}}, false},
		{map[string]any{"port": int64(80)}, map[string]any{"port": float64(80)}, true},
		{[]any{"a", nil, true}, []any{"a", nil, true}, true},
		{map[string]any(nil), nil, true},
		{[]any{}, nil, false},
		{"red", float64(1), false},
	} {
		same, ok := sameJSON(tc.a, tc.b)
		assert.True(t, ok, "%s and %s are generic JSON", show(tc.a), show(tc.b))
		assert.Equal(t, tc.same, same, "%s and %s", show(tc.a), show(tc.b))
	}
	for _, tc := range [][2]any{
		{[]string{"a"}, []any{"a"}},
		{"\xff", "\xfe"},
		{math.NaN(), math.NaN()},
		{float32(0.1), float64(0.1)},
	} {
		_, ok := sameJSON(tc[0], tc[1])
		assert.False(t, ok, "%s and %s are left to the round trip", show(tc[0]), show(tc[1]))
	}
}

// Integers beyond 2^53, which one float64 cannot tell apart, are two values, however they
// were read: by the review door (exactjson), by the cluster feeds and `webhook check`'s
// manifests reader (the API server's reader), or back from a stored policy's compact JSON.
// The same number read by any two of them is one value, and so are 1 and 1.0.
func TestSameValueIsExactForLargeIntegers(t *testing.T) {
	assert.False(t, SameValue(int64(9007199254740993), int64(9007199254740992)))
	assert.False(t, SameValue(int64(9007199254740993), float64(9007199254740992)), "the float64 nearest to ...993 is ...992, not ...993")
	assert.True(t, SameValue(int64(9007199254740992), float64(9007199254740992)))
	assert.False(t, SameValue(int64(math.MaxInt64), float64(math.MaxInt64)), "float64(MaxInt64) is 2^63, beyond int64")

	row, ok := kinds.BuiltinKindTable().Lookup(schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"})
	require.True(t, ok)
	readers := map[string]func(t *testing.T, text string) any{
		"review door": func(t *testing.T, text string) any {
			var v exactjson.Value
			require.NoError(t, jsonv2.Unmarshal([]byte(`{"num":`+text+`}`), &v))
			return v.V.(map[string]any)["num"]
		},
		"cluster feed": func(t *testing.T, text string) any {
			obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, []byte(`{"apiVersion":"v1","kind":"X","num":`+text+`}`))
			require.NoError(t, err)
			return obj.(*unstructured.Unstructured).Object["num"]
		},
		"manifests, YAML": func(t *testing.T, text string) any {
			docs, err := manifests.Decode("a.yaml", []byte("apiVersion: v1\nkind: X\nnum: "+text+"\n"))
			require.NoError(t, err)
			return docs[0].Object["num"]
		},
		"manifests, JSON": func(t *testing.T, text string) any {
			docs, err := manifests.Decode("a.json", []byte(`{"apiVersion":"v1","kind":"X","num":`+text+`}`))
			require.NoError(t, err)
			return docs[0].Object["num"]
		},
		"stored policy": func(t *testing.T, text string) any {
			var v exactjson.Value
			require.NoError(t, jsonv2.Unmarshal([]byte(`{"metadata":{"name":"p"},"spec":{"num":`+text+`}}`), &v))
			c := policy.NewPolicy(row, v.V.(map[string]any)).Compact()
			return c.Spec()["num"]
		},
	}
	// Each text and the number it is: 1 and 1.0 are one number.
	texts := map[string]string{"9007199254740993": "...993", "9007199254740992": "...992", "1": "1", "1.0": "1"}
	for r1, read1 := range readers {
		for r2, read2 := range readers {
			for text1, n1 := range texts {
				for text2, n2 := range texts {
					assert.Equal(t, n1 == n2, SameValue(read1(t, text1), read2(t, text2)),
						"%s read by the %s, %s read by the %s", text1, r1, text2, r2)
				}
			}
		}
	}
}
