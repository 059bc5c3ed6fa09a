package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMessagesName(t *testing.T) {
	var none *Messages
	assert.Equal(t, "ColorPolicy app/a", none.Name("ColorPolicy", "app", "a", "app"))
	assert.Equal(t, `a ColorPolicy in namespace "web"`, none.Name("ColorPolicy", "web", "a", "app"))
	assert.Equal(t, "ColorPolicy web/a", (&Messages{NamesFromOtherNamespaces: true}).Name("ColorPolicy", "web", "a", "app"))
	assert.Equal(t, "GatewayClass c", none.Name("GatewayClass", "", "c", ""))
}
