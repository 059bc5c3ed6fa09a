package merge

import (
	"encoding/json"
	"math"
	"reflect"
	"unicode/utf8"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// SameValue reports whether two settings are the same JSON value as the API server keeps
// it: numbers are compared exactly, so 1 (an int64) and 1.0 (a float64) are one value, and
// 9007199254740993 and 9007199254740992 are two, though one float64 is nearest to both. The
// impact walk asks it for every setting of every policy on every path, and most of those
// settings differ, so it walks the generic JSON shapes itself (maps, lists, strings, numbers,
// booleans, null) without allocating; any other Go type, or a string that is not valid UTF-8
// (which encoding turns into U+FFFD), is compared by a JSON round trip, as before.
func SameValue(a, b any) bool {
	if same, ok := sameJSON(a, b); ok {
		return same
	}
	return reflect.DeepEqual(a, b) || reflect.DeepEqual(normalize(a), normalize(b))
}

// sameJSON compares a and b as JSON values. ok is false when it meets a value it does not
// know how to compare: the caller then falls back to the round trip.
func sameJSON(a, b any) (same, ok bool) {
	if isNull(a) || isNull(b) {
		return isNull(a) && isNull(b), isGenericJSON(a) && isGenericJSON(b)
	}
	switch a := a.(type) {
	case bool:
		bb, isBool := b.(bool)
		return isBool && a == bb, isGenericJSON(b)
	case string:
		bs, isString := b.(string)
		if isString && a == bs {
			return true, true
		}
		if !utf8.ValidString(a) {
			return false, false
		}
		return false, isGenericJSON(b) // false for b not valid UTF-8 either
	case map[string]any:
		bm, isMap := b.(map[string]any)
		if !isMap {
			return false, isGenericJSON(b)
		}
		if len(a) != len(bm) {
			return false, true
		}
		for k, av := range a {
			bv, found := bm[k]
			if !found {
				return false, true
			}
			if same, ok := sameJSON(av, bv); !ok || !same {
				return same, ok
			}
		}
		return true, true
	case []any:
		bl, isList := b.([]any)
		if !isList {
			return false, isGenericJSON(b)
		}
		if len(a) != len(bl) {
			return false, true
		}
		for i := range a {
			if same, ok := sameJSON(a[i], bl[i]); !ok || !same {
				return same, ok
			}
		}
		return true, true
	}
	x, aIsNumber := jsonNumber(a)
	if !aIsNumber {
		return false, false
	}
	y, bIsNumber := jsonNumber(b)
	if !bIsNumber {
		return false, isGenericJSON(b)
	}
	return x.equal(y), true
}

// isNull reports whether v encodes as JSON null: nil, or a nil map or list.
func isNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return v == nil
	case []any:
		return v == nil
	}
	return false
}

// isGenericJSON reports whether sameJSON knows v's type.
func isGenericJSON(v any) bool {
	switch v := v.(type) {
	case nil, bool, map[string]any, []any:
		return true
	case string:
		return utf8.ValidString(v)
	}
	_, isNumber := jsonNumber(v)
	return isNumber
}

// number is a Go number as a JSON round trip through the API server's reader gives it back:
// an integer an int64 holds is exact (isInt, i), any other number the float64 nearest to it.
type number struct {
	isInt bool
	i     int64
	f     float64
}

// jsonNumber returns a Go number as a number. NaN and the infinities have no JSON form, and
// a float32 is written in its own shortest form, which reads back as another float64 than its
// conversion: those are left to the round trip.
func jsonNumber(v any) (number, bool) {
	switch n := v.(type) {
	case float64:
		return number{f: n}, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int64:
		return number{isInt: true, i: n}, true
	case int:
		return number{isInt: true, i: int64(n)}, true
	case int32:
		return number{isInt: true, i: int64(n)}, true
	case uint64:
		if n <= math.MaxInt64 {
			return number{isInt: true, i: int64(n)}, true
		}
		return number{f: float64(n)}, true // its text is read back as a float64
	}
	return number{}, false
}

// equal compares exactly: an integer equals a float64 only if the float64 is that integer.
func (x number) equal(y number) bool {
	switch {
	case x.isInt && y.isInt:
		return x.i == y.i
	case x.isInt:
		return floatIsInt(y.f, x.i)
	case y.isInt:
		return floatIsInt(x.f, y.i)
	}
	return x.f == y.f
}

// floatIsInt reports whether f is exactly the integer i (converting i to a float64 would
// round it beyond 2^53).
func floatIsInt(f float64, i int64) bool {
	return f >= -(1<<63) && f < 1<<63 && f == math.Trunc(f) && int64(f) == i
}

// normalize is a value after a JSON round trip through the API server's reader: integers an
// int64 holds become int64, other numbers float64, and any Go type the generic JSON shapes.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
