package main

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestCLIReference keeps docs/cli.md equal to what `webhook COMMAND --help` prints (run
// `make update-golden` after changing a command), and each docs page on a command opening
// with the command's usage line.
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

	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	usage := regexp.MustCompile("(?m)^# `webhook ([a-z]+)`\n\n```\n(.*)\n")
	found := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range usage.FindAllStringSubmatch(string(data), -1) {
			found++
			cmd, _, err := root.Find([]string{m[1]})
			require.NoError(t, err, m[1])
			assert.Equal(t, "webhook "+cmd.Use, m[2], "%s: the usage line of webhook %s", page, m[1])
		}
	}
	assert.NotZero(t, found, "the docs have a page per command, opening with its usage line")
}

// TestKindTableReference keeps docs/kinds.md equal to `webhook kinds`, the table of the
// built-in kind rows (`make update-golden` rewrites it).
func TestKindTableReference(t *testing.T) {
	_, out, errOut := runCLI(t, "", "kinds")
	require.Empty(t, errOut)
	testkit.Golden(t, filepath.Join("..", "..", "docs", "kinds.md"), "# The kind table\n\n"+
		"Generated from the built-in kind rows (`pkg/rules/kinds/builtin_kinds.yaml`) by `webhook kinds`\n"+
		"(`make update-golden` rewrites this page). What each column means: [Policy kinds](policy-kinds.md).\n\n"+out)
}

func writeReference(b *strings.Builder, cmd *cobra.Command) {
	b.WriteString("\n## webhook " + cmd.Name() + "\n\n```\nwebhook " + cmd.Use + "\n```\n\n")
	b.WriteString(cmd.Long + "\n\n```\n" + cmd.LocalFlags().FlagUsages() + "```\n")
}

// mdLink is a Markdown link: its label and target.
var mdLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)

// TestReadmeIsTheFrontPage keeps README.md short (at most 250 lines: what it is, the two
// commands, the install, links), every file it links to present, and docs/index.md (the
// site's front page) equal to it with its links made relative to docs/ (`make
// update-golden` rewrites it).
func TestReadmeIsTheFrontPage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, strings.Count(string(readme), "\n"), 250, "README.md is the front page: move detail to docs/")
	const repo = "https://github.com/policyattachment/webhook/blob/main/"
	index := mdLink.ReplaceAllStringFunc(string(readme), func(link string) string {
		m := mdLink.FindStringSubmatch(link)
		label, target := m[1], m[2]
		if strings.HasPrefix(target, "http") || strings.HasPrefix(target, "#") {
			return link
		}
		path, _, _ := strings.Cut(target, "#")
		_, err := os.Stat(filepath.Join("..", "..", path))
		assert.NoError(t, err, "README links to %s", target)
		if rest, ok := strings.CutPrefix(target, "docs/"); ok {
			return "[" + label + "](" + cmp.Or(rest, "index.md") + ")"
		}
		return "[" + label + "](" + repo + target + ")"
	})
	testkit.Golden(t, filepath.Join("..", "..", "docs", "index.md"),
		"<!-- Generated from README.md by a test (make update-golden); edit README.md. -->\n"+index)
}
