package exactjson

import (
	"math"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Numbers reads what the API server's own reader (utiljson) reads, for every number form.
func TestNumbersReadAsTheAPIServerReads(t *testing.T) {
	for _, text := range []string{
		"0", "-0", "1", "-1", "1.0", "1e2", "1E2", "-1.5e-3", "0.1",
		"9007199254740992", "9007199254740993", "-9007199254740993",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "99999999999999999999", "12345678901234567890123", "1e308",
	} {
		var want map[string]any
		require.NoError(t, utiljson.Unmarshal([]byte(`{"n":`+text+`}`), &want), text)
		var got any
		require.NoError(t, jsonv2.Unmarshal([]byte(`{"n":`+text+`}`), &got, Numbers), text)
		assert.Equal(t, want, got, text)
	}
}

func TestNumbersKeepsIntegersExact(t *testing.T) {
	var got any
	require.NoError(t, jsonv2.Unmarshal([]byte(`{"a":[9007199254740993,{"b":-9007199254740993}],"c":1.5,"d":"x","e":null,"f":true,"g":false,"h":{},"i":[]}`), &got, Numbers))
	assert.Equal(t, map[string]any{
		"a": []any{int64(9007199254740993), map[string]any{"b": int64(-9007199254740993)}},
		"c": 1.5, "d": "x", "e": nil, "f": true, "g": false, "h": map[string]any{}, "i": []any{},
	}, got)
}

// The decoder's own checks still apply: duplicate names, syntax, depth; a number beyond
// float64's range is an error.
func TestNumbersKeepsTheDecodersChecks(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":}`, `[1,]`, `{"a":1e999}`, `[` + string(make([]byte, 0)) + `tru]`} {
		var got any
		assert.Error(t, jsonv2.Unmarshal([]byte(in), &got, Numbers), in)
	}
	var got any
	require.NoError(t, jsonv2.Unmarshal([]byte("{\"a\":\"\xff\"}"), &got, jsontext.AllowInvalidUTF8(true), Numbers))
	assert.Equal(t, map[string]any{"a": "\ufffd"}, got)
	_, ok := integer([]byte("-"))
	assert.False(t, ok)
	n, ok := integer([]byte("-9223372036854775808"))
	assert.True(t, ok)
	assert.Equal(t, int64(math.MinInt64), n)
}
