// Package exactjson reads generic JSON (any, map[string]any, []any) with its numbers as the
// API server keeps them: an integer that an int64 holds is an int64, every other number a
// float64 (k8s.io/apimachinery/pkg/util/json's rule for unstructured objects, which is what
// etcd stores and what the API server sends in a review). Decoding into any with encoding/json
// or encoding/json/v2 makes every number a float64, which holds integers exactly only up to
// 2^53: 9007199254740993 would read as 9007199254740992, so two policies setting those two
// values would judge as one value and a message would quote the wrong one.
//
// It imports encoding/json/v2 (from its mirror module) and nothing of the webhook.
package exactjson

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Numbers is the encoding/json/v2 option that decodes every value of type any this way
// (jsonv2.Unmarshal(data, &v, exactjson.Numbers)); it changes nothing else the decoder does
// (duplicate names are refused, invalid UTF-8 follows the other options given). Its reading
// replaces the decoder's own for those values and, like it, makes each short string once
// per cache (pooled), so it allocates no more.
var Numbers = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(decodeAny))

// Value is generic JSON read as Numbers reads it, for a field or a document that is decoded
// without that option. V is nil for an absent field and for null.
type Value struct{ V any }

// UnmarshalJSONFrom implements encoding/json/v2's UnmarshalerFrom.
func (v *Value) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return decodeAny(dec, &v.V)
}

func decodeAny(dec *jsontext.Decoder, v *any) error {
	cache := caches.Get().(*stringCache)
	val, err := value(dec, cache)
	caches.Put(cache)
	if err != nil {
		return err
	}
	*v = val
	return nil
}

// value reads one JSON value as generic JSON: what encoding/json/v2 reads into an any,
// except numbers (Number).
func value(dec *jsontext.Decoder, cache *stringCache) (any, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		obj := make(map[string]any)
		for dec.PeekKind() != '}' {
			name, err := str(dec, cache)
			if err != nil {
				return nil, err
			}
			val, err := value(dec, cache)
			if err != nil {
				return nil, err
			}
			obj[name] = val
		}
		_, err := dec.ReadToken()
		return obj, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		arr := []any{}
		for dec.PeekKind() != ']' {
			val, err := value(dec, cache)
			if err != nil {
				return nil, err
			}
			arr = append(arr, val)
		}
		_, err := dec.ReadToken()
		return arr, err
	case '"':
		return str(dec, cache)
	case '0':
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return Number(raw)
	}
	// null and booleans; anything else is an error the decoder reports.
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() == 'n' {
		return nil, nil
	}
	return tok.Bool(), nil
}

// str reads a string (a value or an object's name), the same string for the same text as
// far as the cache remembers, as encoding/json/v2 does for the values it reads into an any.
// Invalid UTF-8, where the decoder's options let it through, reads as U+FFFD.
func str(dec *jsontext.Decoder, cache *stringCache) (string, error) {
	raw, err := dec.ReadValue() // valid until the next read: the string is made before it
	if err != nil {
		return "", err
	}
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
		text, _ = jsontext.AppendUnquote(nil, raw) // escapes; U+FFFD for invalid UTF-8
	}
	return cache.make(text), nil
}

// stringCache keeps the last string made for each of 256 hashes of short texts (names,
// groups, kinds repeat across the objects a process reads). Caches are pooled, so one
// outlives the value it was taken for, as encoding/json/v2's own cache does on its pooled
// decoders.
type stringCache [256]string

var caches = sync.Pool{New: func() any { return new(stringCache) }}

var seed = maphash.MakeSeed()

func (c *stringCache) make(b []byte) string {
	if len(b) < 2 || len(b) > 256 { // one-byte strings are interned by the runtime
		return string(b)
	}
	i := maphash.Bytes(seed, b) % uint64(len(c))
	if s := c[i]; s == string(b) {
		return s
	}
	s := string(b)
	c[i] = s
	return s
}

// Number reads JSON number text: an int64 when it is an integer (no fraction, no exponent)
// that an int64 holds, otherwise the nearest float64. A number beyond float64's range is an
// error, as it is for encoding/json.
func Number(text []byte) (any, error) {
	if i, ok := integer(text); ok {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return nil, fmt.Errorf("cannot read the number %s: %w", text, err)
	}
	return f, nil
}

// integer reads text made of an optional minus sign and decimal digits as an int64, if one
// holds it (strconv.ParseInt without the string its error keeps).
func integer(text []byte) (int64, bool) {
	digits := text
	negative := len(digits) > 0 && digits[0] == '-'
	if negative {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0') // 19 digits stay below 2^64
	}
	switch {
	case negative && n <= 1<<63:
		return int64(-n), true
	case !negative && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}
