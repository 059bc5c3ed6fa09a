package impact

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestImpactForAnnotationIsBounded(t *testing.T) {
	refs := make([]string, 3000)
	for i := range refs {
		refs[i] = fmt.Sprintf("team-%d/route-policy", i)
	}
	im := Impact{Status: StatusEnforced, Overrides: refs, OverriddenBy: refs[:3]}
	got := im.ForAnnotation()
	assert.Len(t, got.Overrides, MaxAnnotatedRefs)
	assert.Equal(t, refs[:MaxAnnotatedRefs], got.Overrides)
	assert.Equal(t, 3000, got.OverridesTotal)
	assert.Equal(t, refs[:3], got.OverriddenBy)
	assert.Zero(t, got.OverriddenByTotal, "a short list is left alone")
	assert.Len(t, im.Overrides, 3000, "the original is unchanged")

	assert.Equal(t, "a, b", refList([]string{"a", "b"}, 0))
	assert.Equal(t, "a, b, c, d, e and 2995 more", refList([]string{"a", "b", "c", "d", "e", "f"}, 3000))
	assert.Equal(t, "a, b, c, d, e and 1 more", refList([]string{"a", "b", "c", "d", "e", "f"}, 0))
}
