package explainview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/explainview"
)

// TestDocsSample keeps the Mermaid sample of docs/pictures.md equal to `webhook explain -f
// examples/ -o mermaid` (UPDATE_GOLDEN=1 rewrites it).
func TestDocsSample(t *testing.T) {
	page := filepath.Join("..", "..", "docs", "pictures.md")
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	const open, end = "```mermaid\n", "```\n"
	doc := string(data)
	start := strings.Index(doc, open)
	require.GreaterOrEqual(t, start, 0, "%s has no ```mermaid block", page)
	start += len(open)
	stop := strings.Index(doc[start:], end)
	require.GreaterOrEqual(t, stop, 0)
	stop += start

	snap, ex, target := explain(t, cases["examples"].in, "", "")
	var b bytes.Buffer
	require.NoError(t, explainview.Write(&b, "mermaid", snap, ex, target))
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(page, []byte(doc[:start]+b.String()+doc[stop:]), 0o644))
		return
	}
	require.Equal(t, b.String(), doc[start:stop], "%s: the Mermaid sample is stale; run make update-golden", page)
}
