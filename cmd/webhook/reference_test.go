package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/internal/testkit"
)

// TestCLIReference keeps docs/cli.md equal to what `webhook COMMAND --help` prints (run
// `make update-golden` after changing a command), and each README section on a command
// opening with the command's usage line.
func TestCLIReference(t *testing.T) {
	var code int
	root := newRootCommand(streams{}, &code)
	var b strings.Builder
	b.WriteString("# CLI reference\n\nGenerated from the commands themselves (`make update-golden`); `webhook COMMAND --help` prints the same.\n")
	for _, cmd := range root.Commands() {
		if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
			continue
		}
		writeReference(&b, cmd)
	}
	b.WriteString("\n`webhook completion bash|zsh|fish|powershell` prints a shell completion script.\n")
	testkit.Golden(t, filepath.Join("..", "..", "docs", "cli.md"), b.String())

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	sections := regexp.MustCompile("(?m)^## `webhook ([a-z]+)`\n\n```\n(.*)\n").FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, sections)
	for _, m := range sections {
		cmd, _, err := root.Find([]string{m[1]})
		require.NoError(t, err, m[1])
		assert.Equal(t, "webhook "+cmd.Use, m[2], "README's usage line of webhook %s", m[1])
	}
}

func writeReference(b *strings.Builder, cmd *cobra.Command) {
	b.WriteString("\n## webhook " + cmd.Name() + "\n\n```\nwebhook " + cmd.Use + "\n```\n\n")
	b.WriteString(cmd.Long + "\n\n```\n" + cmd.LocalFlags().FlagUsages() + "```\n")
}
