package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// exitCode is one exit status of a command and what it means.
type exitCode struct {
	code    int
	meaning string
}

// wrongLine is how every command ends on a wrong command line (an unknown flag, a missing
// value, a stray argument): the error and the usage on stderr, exit 2 (run).
const wrongLine = "a wrong command line"

// exitCodes are what each command's exit status means, the one place that says it: each
// command's --help ends with its list (withExitCodes) and docs/exit-codes.md is generated
// from them (TestExitCodesReference).
var exitCodes = map[string][]exitCode{
	"check": {
		{exitOK, "every policy is allowed; with --diff, the manifests introduce no finding"},
		{exitDenied, "a policy is denied (with --fail-on-warning, also one warned about or admitted only by its enforcement mode); with --diff, the manifests introduce a finding (a warning too)"},
		{exitBadInput, "unusable input (the manifests, --base, --config, -o), an unreachable cluster, or " + wrongLine},
	},
	"explain": {
		{exitOK, "the explanation is printed"},
		{exitBadInput, "unusable input (the manifests, --config, -o, the target), an unreachable cluster, or " + wrongLine},
	},
	"audit": {
		{exitOK, "no stored policy would be denied today (with -n, none in that namespace)"},
		{exitDenied, "a stored policy would be denied today: a finding"},
		{exitBadInput, "unusable input (the manifests, --config, -o, -n with -A), an unreachable cluster, or " + wrongLine},
	},
	"report": {
		{exitOK, "with --once, the round is written; with -f, the Reports are printed; otherwise, stopped by SIGTERM or SIGINT"},
		{exitDenied, "with --once, the round failed (the cluster not read, or a Report not written)"},
		{exitBadInput, "unusable input (--config, the kubeconfig, the manifests of -f, --interval, --writes-per-second) or " + wrongLine},
	},
	"serve": {
		{exitOK, "stopped by SIGTERM or SIGINT, after --shutdown-delay and the reviews in flight"},
		{exitBadInput, "unusable flags, --config, certificates or kubeconfig, a server that could not start or failed, or " + wrongLine},
	},
	"kinds": {
		{exitOK, "the kind table is printed"},
		{exitBadInput, "an unusable --config or -o, or " + wrongLine},
	},
	"uninstall": {
		{exitOK, "both webhook configurations are gone (deleted now, or absent already)"},
		{exitBadInput, "a configuration could not be deleted or seen gone (permissions, an unreachable cluster, --timeout), or " + wrongLine},
	},
	"version": {
		{exitOK, "the version is printed"},
		{exitBadInput, wrongLine},
	},
}

// withExitCodes is a command's long description ending with its exit codes.
func withExitCodes(cmd *cobra.Command) string {
	codes, ok := exitCodes[cmd.Name()]
	if !ok {
		return cmd.Long
	}
	var b strings.Builder
	b.WriteString(cmd.Long + "\n\nExit codes:")
	for _, c := range codes {
		fmt.Fprintf(&b, "\n  %d  %s", c.code, wrap(c.meaning, 90, "     "))
	}
	return b.String()
}

// wrap breaks s into lines of at most width characters, at spaces, indenting the lines after
// the first.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := len(indent)
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// exitCodesIntro opens docs/exit-codes.md; ^ stands for a backquote.
const exitCodesIntro = `# Exit codes

Generated from the commands themselves (^make update-golden^); each command's ^--help^ ends
with the same list. ^kubectl policy-attachment COMMAND^ is the same binary and exits the same
way.

Every command keeps to one convention, as ^kubectl diff^ does: **0** it did what was asked
and found nothing wrong, **1** it did and found something (a denial, a finding, a failed
round), **2** it could not do what was asked (unusable input, an unreachable cluster, a wrong
command line). A script or a CI job can tell "the policies are wrong" (1) from "the job is
wrong" (2). Errors and warnings go to stderr in every case, the answer alone to stdout. A
wrong command line (an unknown flag, a missing value, a stray argument) prints what was wrong
and the command's usage on stderr. ^webhook^ with no command prints the usage and exits 2;
^--help^ and ^help^ exit 0.
`

// exitCodesPage is docs/exit-codes.md: a table per command.
func exitCodesPage(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(exitCodesIntro, "^", "`"))
	for _, cmd := range root.Commands() {
		codes, ok := exitCodes[cmd.Name()]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\n## webhook %s\n\n| exit | when |\n| --- | --- |\n", cmd.Name())
		for _, c := range codes {
			fmt.Fprintf(&b, "| %d | %s |\n", c.code, c.meaning)
		}
	}
	return b.String()
}
