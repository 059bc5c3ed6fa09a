package merge

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
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
