package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestExitCodesReference keeps docs/exit-codes.md equal to the exit codes each command's
// help ends with (`make update-golden` rewrites it).
func TestExitCodesReference(t *testing.T) {
	var code int
	testkit.Golden(t, filepath.Join("..", "..", "docs", "exit-codes.md"), exitCodesPage(newRootCommand(streams{}, &code)))
}

// TestEveryCommandSaysItsExitCodes: every command's --help ends with its exit codes, 0 and
// 2 among them (a wrong command line is 2 everywhere), in one form.
func TestEveryCommandSaysItsExitCodes(t *testing.T) {
	var code int
	for _, cmd := range newRootCommand(streams{}, &code).Commands() {
		if cmd.Name() == "help" || cmd.Name() == "completion" {
			continue
		}
		codes, ok := exitCodes[cmd.Name()]
		if !assert.True(t, ok, "webhook %s has no exit codes", cmd.Name()) {
			continue
		}
		assert.Equal(t, exitOK, codes[0].code, cmd.Name())
		assert.Equal(t, exitBadInput, codes[len(codes)-1].code, cmd.Name())
		assert.True(t, strings.HasSuffix(codes[len(codes)-1].meaning, wrongLine), cmd.Name())
		_, out, errOut := runCLI(t, "", cmd.Name(), "--help")
		assert.Empty(t, errOut)
		help, _, _ := strings.Cut(out, "\nUsage:")
		_, list, found := strings.Cut(help, "\n\nExit codes:\n")
		if assert.True(t, found, "webhook %s --help:\n%s", cmd.Name(), help) {
			// The whole list, each code followed by its whole meaning (the lines wrapped
			// however wrap wraps them).
			var want []string
			for _, c := range codes {
				want = append(want, fmt.Sprint(c.code), c.meaning)
			}
			assert.Equal(t, strings.Fields(strings.Join(want, " ")), strings.Fields(list), cmd.Name())
		}
	}
}

func TestWrap(t *testing.T) {
	assert.Equal(t, "one two\n  three", wrap("one two three", 9, "  "))
	assert.Equal(t, "one", wrap("one", 2, "  "), "a word longer than the line stays whole")
}
