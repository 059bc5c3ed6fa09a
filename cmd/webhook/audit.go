package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/check"
)

// clusterReadTimeout bounds reading a cluster for an audit.
const clusterReadTimeout = 5 * time.Minute

func newAuditCommand(s streams, code *int) *cobra.Command {
	var flags offlineFlags
	var cluster clusterFlags
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "audit [-f PATH]... [-R] [-k DIR] [-n NAMESPACE | -A] [--kubeconfig FILE] [--config FILE] [-o text|json|yaml|wide|sarif|junit]",
		Short: "Find the stored policies the rules would deny today",
		Long: "Reports the stored policies the rules would deny today: policies created before the\n" +
			"webhook was installed, while it was down or failing open, or while their rule was in\n" +
			"Warn or DryRun. Policies are replayed oldest first (GEP-713 order), each judged\n" +
			"against every other object and the older policies that pass: of two conflicting\n" +
			"policies, the younger is reported. Reads the cluster (every namespace; needs the\n" +
			"webhook's read permissions) unless -f names manifests (CustomResourceDefinitions\n" +
			"among them apply their defaults, and a document they refuse is left out and said on\n" +
			"stderr, as in explain). Messages name policies in\n" +
			"every namespace; -n reports only the findings in one (judged against the whole\n" +
			"state). Where a policy carries the status its controller wrote (status.ancestors, or\n" +
			"status.conditions where its kind row says so), the audit also compares it with the\n" +
			"prediction for the same ancestor and target and reports each disagreement with both\n" +
			"sides (docs/status-comparison.md); disagreements alone do not change the exit code.\n" +
			"Reading a cluster, a terminal shows one progress line on stderr, a pipe nothing, -v a\n" +
			"line per kind read.",
		RunE: func(*cobra.Command, []string) error {
			*code = runAudit(flags, cluster, allNamespaces, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text, json, yaml, wide (a table, a row per finding), sarif or junit (each finding a failed test case)"
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "report the findings of every namespace (the default without -n)")
	cluster.register(cmd.Flags())
	return cmd
}

func runAudit(flags offlineFlags, cluster clusterFlags, allNamespaces bool, s streams) int {
	if !flags.checkOutput("audit", s.err, "wide", "sarif", "junit") {
		return exitBadInput
	}
	if allNamespaces && cluster.overrides.Context.Namespace != "" {
		fmt.Fprintf(s.err, "%s: give -n or -A, not both\n", progName("audit"))
		return exitBadInput
	}
	conf, err := loadConfig(flags.configFile)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("audit"), err)
		return exitBadInput
	}
	var state *check.StateBuilder
	if flags.given() {
		state, err = flags.state(s.in, conf.table, s.err, "audit")
	} else {
		state, err = cluster.state(conf, s.err)
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("audit"), err)
		return exitBadInput
	}
	report := state.Audit(conf.settings)
	if namespace := cluster.overrides.Context.Namespace; namespace != "" {
		report.OnlyIn(namespace) // the whole state is judged; -n narrows what is reported
	}
	switch flags.output {
	case "json":
		err = check.WriteAuditJSON(s.out, report)
	case "yaml":
		err = writeStructured(s.out, "yaml", report)
	case "wide":
		err = check.WriteAuditTable(s.out, report)
	case "sarif":
		err = check.WriteSARIF(s.out, report.AsReport(), buildVersion())
	case "junit":
		err = check.WriteJUnit(s.out, report.AsReport(), "audit")
	default:
		err = check.WriteAuditText(s.out, report)
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("audit"), err)
		return exitBadInput
	}
	if report.Summary.Findings > 0 {
		return exitDenied
	}
	return exitOK
}
