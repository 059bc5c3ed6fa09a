package clusterstate

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEachListItem(t *testing.T) {
	tests := []struct {
		name, body string
		want       []map[string]any
		wantRV     string
		wantErr    string
	}{{
		name: "a typed list: items without kind, integers as int64, fields after items skipped",
		body: `{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":""},"items":[` +
			`{"metadata":{"name":"a","namespace":"n"},"spec":{"ports":[{"port":443,"weight":0.5}]}},` +
			`{"metadata":{"name":"b","namespace":"n"}}],"extra":{"x":[1,2]}}`,
		want: []map[string]any{
			{"metadata": map[string]any{"name": "a", "namespace": "n"}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(443), "weight": 0.5}}}},
			{"metadata": map[string]any{"name": "b", "namespace": "n"}},
		},
		wantRV: "42",
	}, {
		name:   "no items",
		body:   `{"kind":"List","metadata":{"resourceVersion":"7"},"items":null}`,
		wantRV: "7",
	}, {
		name:    "cut short",
		body:    `{"kind":"List","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}},{"meta`,
		want:    []map[string]any{{"metadata": map[string]any{"name": "a"}}},
		wantErr: "unexpected EOF",
	}, {
		name:    "not a list",
		body:    `[1]`,
		wantErr: `list response: want "{", got [`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []map[string]any
			rv, err := eachListItem(strings.NewReader(tt.body), func(obj map[string]any) error {
				got = append(got, obj)
				return nil
			})
			assert.Equal(t, tt.want, got)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantRV, rv)
		})
	}
}

func TestEachListItemStopsAtTheCallersError(t *testing.T) {
	calls := 0
	_, err := eachListItem(strings.NewReader(`{"items":[{},{},{}]}`), func(map[string]any) error {
		calls++
		return errors.New("store full")
	})
	require.EqualError(t, err, "store full")
	assert.Equal(t, 1, calls)
}
