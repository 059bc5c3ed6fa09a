// Command webhook is the Gateway API policy attachment admission webhook and its offline tools.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes shared by the subcommands.
const (
	exitOK       = 0
	exitDenied   = 1
	exitBadInput = 2
)

const usage = `webhook: admission control for Gateway API policy attachment (GEP-713).

Usage:
  webhook check -f PATH [-f PATH]... [--config FILE] [-o text|json]
      Judge every policy in the manifests offline, in document order, as the API server
      would admit them. Exit 0 if all are allowed, 1 if any is denied, 2 on unusable input.
  webhook explain -f PATH [-f PATH]... [--target KIND/NAMESPACE/NAME] [--config FILE] [-o text|json]
      Read the manifests as the cluster state (every policy, as if stored) and print the
      effective policy of every policy kind on every context path, the policy behind each
      setting, and each policy's impact status (Enforced, PartiallyEnforced, Overridden,
      NoTargets). Exit 0, or 2 on unusable input.
  webhook audit [-f PATH]... [--kubeconfig FILE] [--config FILE] [-o text|json]
      Find the stored policies the rules would deny today (created before the webhook was
      installed, while it was down, or under Warn/DryRun): replays the cluster's policies
      (or the manifests') in GEP-713 order, oldest first. Exit 0 if none, 1 if any, 2 on
      unusable input or an unreachable cluster.
  webhook serve [--cert-dir DIR] [--port 9443] [--config FILE] [--kubeconfig FILE]
      Serve the validating and mutating admission webhook over HTTPS (/validate, /mutate,
      /healthz, /readyz, /metrics), judging against its own indexed view of the cluster (a list and watch per kind), and
      audit the stored policies periodically (--audit-interval).
  webhook report [--interval 1m] [--once] [--kubeconfig FILE] [--config FILE]
      Write each namespace's current truth as an OpenReports Report (openreports.io/v1alpha1):
      each policy's impact now, and what the audit would deny today; rewritten only when a
      result changes. With -f PATH, print the Reports for manifests instead.
  webhook kinds [--config FILE] [-o text|json]
      Print the kind table: every policy kind known and what is enforced for it.
  webhook version
      Print the version the binary was built as.
  webhook help
      Print this text.

Run "webhook COMMAND --help" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitBadInput
	}
	switch args[0] {
	case "check":
		return runCheck(args[1:], stdin, stdout, stderr)
	case "explain":
		return runExplain(args[1:], stdin, stdout, stderr)
	case "audit":
		return runAudit(args[1:], stdin, stdout, stderr)
	case "report":
		return runReport(args[1:], stdin, stdout, stderr)
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "kinds":
		return runKinds(args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "webhook: unknown command %q\n\n%s", args[0], usage)
		return exitBadInput
	}
}
