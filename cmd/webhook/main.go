// Command webhook is the Gateway API policy attachment admission webhook and its offline tools.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes shared by the subcommands.
const (
	exitOK       = 0
	exitDenied   = 1
	exitBadInput = 2
)

// streams are where a command reads and writes; tests give buffers.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// PluginName is the name kubectl knows the binary by when it is installed as
// kubectl-policy_attachment (kubectl turns the dash of `kubectl policy-attachment` into the
// file name's underscore; krew's naming guide: lowercase, specific, no "kube" prefix).
const PluginName = "policy-attachment"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// asPlugin reports whether the binary runs as a kubectl plugin, by its file name.
func asPlugin() bool {
	return strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-")
}

// run executes one command line and returns its exit code: a command's own (0, 1, 2 as
// each documents), or 2 when the line itself is wrong (an unknown command or flag, a
// missing value), after printing what was wrong and the command's usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitOK
	root := newRootCommand(streams{stdin, stdout, stderr}, &code)
	root.SetArgs(args)
	if cmd, err := root.ExecuteC(); err != nil {
		if !errors.As(err, new(printedError)) {
			_ = usageError(cmd, err) // an unknown command
		}
		return exitBadInput
	}
	return code
}

func newRootCommand(s streams, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:   "webhook",
		Short: "Admission control for Gateway API policy attachment (GEP-713)",
		Long: "webhook: admission control for Gateway API policy attachment (GEP-713).\n\n" +
			"It denies malformed targetRefs, cross-namespace references without a ReferenceGrant,\n" +
			"more than one merge strategy and same-level conflicts, and predicts each accepted\n" +
			"policy's effect. The same rules run offline (check, explain), against a cluster\n" +
			"(audit, report) and as the admission webhook (serve). Each command's help ends with\n" +
			"its exit codes: 0 done and nothing wrong, 1 something found, 2 could not do it.",
		Version:       buildVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(s.err)
			_ = cmd.Usage()
			*code = exitBadInput
			return nil
		},
	}
	if asPlugin() {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl " + PluginName}
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetVersionTemplate("webhook {{.Version}}\n")
	// A wrong command line says what was wrong, then how the command is used, on stderr.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError(cmd, err)
	})
	root.AddCommand(
		newCheckCommand(s, code),
		newExplainCommand(s, code),
		newAuditCommand(s, code),
		newReportCommand(s, code),
		newServeCommand(s, code),
		newKindsCommand(s, code),
		newUninstallCommand(s, code),
		newVersionCommand(s),
	)
	for _, c := range root.Commands() {
		c.Args = wrongArgs(c.Args)
		c.Long = withExitCodes(c)
	}
	return root
}

// printedError is a command-line error already shown to the user.
type printedError struct{ error }

// usageError prints err and the command's usage on stderr.
func usageError(cmd *cobra.Command, err error) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n\n", cmd.CommandPath(), err)
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Usage()
	return printedError{err}
}

// wrongArgs makes a positional-argument check print what was wrong and the usage.
func wrongArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		check = cobra.NoArgs
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, err)
		}
		return nil
	}
}

// progName is how messages name a command: "webhook check", or "kubectl policy-attachment
// check" when the binary runs as the kubectl plugin.
func progName(cmd string) string {
	if asPlugin() {
		return "kubectl " + PluginName + " " + cmd
	}
	return "webhook " + cmd
}
