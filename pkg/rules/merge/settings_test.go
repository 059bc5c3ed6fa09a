package merge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

func TestSettings(t *testing.T) {
	b := policy.Block{Body: map[string]any{
		"colors":  map[string]any{"dark": "brown", "light": "red"},
		"retryOn": []any{"501", "502"},
		"limits":  map[string]any{"a": map[string]any{"x": int64(1)}, "b": map[string]any{"x": int64(2)}},
	}}
	assert.Equal(t, []Setting{{Path: "", Value: b.Body}}, SettingsOf(b, kinds.StrategyAtomic, nil))
	assert.Equal(t, []Setting{
		{Path: "colors.dark", Value: "brown"}, {Path: "colors.light", Value: "red"},
		{Path: "limits.a.x", Value: int64(1)}, {Path: "limits.b.x", Value: int64(2)},
		{Path: "retryOn", Value: []any{"501", "502"}},
	}, SettingsOf(b, kinds.StrategyPatch, nil))
	assert.Equal(t, []Setting{
		{Path: "colors", Value: map[string]any{"dark": "brown", "light": "red"}},
		{Path: "limits.a", Value: map[string]any{"x": int64(1)}}, {Path: "limits.b", Value: map[string]any{"x": int64(2)}},
		{Path: "retryOn", Value: []any{"501", "502"}},
	}, SettingsOf(b, kinds.StrategyMerge, []string{"limits"}))
	assert.Equal(t, kinds.StrategyAtomic, CoarserStrategy(kinds.StrategyPatch, kinds.StrategyAtomic))
	assert.Equal(t, kinds.StrategyMerge, CoarserStrategy(kinds.StrategyPatch, kinds.StrategyMerge))
}
