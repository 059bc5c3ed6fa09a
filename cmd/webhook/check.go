package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func newCheckCommand(s streams, code *int) *cobra.Command {
	var flags offlineFlags
	var cluster clusterFlags
	var live, failOnWarning bool
	var diff diffFlags
	cmd := &cobra.Command{
		Use:   "check (-f PATH [-f PATH]... [-R] | -k DIR) [--cluster [--diff] | --diff --base PATH] [--config FILE] [-o text|json|yaml|wide|sarif|junit] [--fail-on-warning]",
		Short: "Judge the policies in manifests, as the API server would admit them",
		Long: "Admits the policies in the manifests one by one, in document order, against every\n" +
			"non-policy object and the policies admitted before them, and prints each verdict with\n" +
			"the annotations the mutating webhook would write. With --cluster, against the live\n" +
			"cluster's objects and policies too (what a pull request would do if merged now: a\n" +
			"manifest's policy updates the stored one of its name, or is created after every\n" +
			"stored one); it reads the cluster with the webhook's read permissions. Documents that\n" +
			"name no namespace are in -n's (as kubectl apply -n puts them; with --cluster, else the\n" +
			"kubeconfig context's), else default. CustomResourceDefinitions among the manifests\n" +
			"(with --cluster, the cluster's CRDs of the manifests' kinds) judge first, as the API\n" +
			"server does before any webhook: their defaults are applied, a policy their schema or\n" +
			"CEL rules refuse (or with a field they do not declare, as kubectl's default\n" +
			"--validate=strict refuses it) is DENIED with reason Invalid and the API server's\n" +
			"words, and another object they refuse is unusable input. Without its CRD, a kind is\n" +
			"judged by the rules alone, and the output says so once per kind, the exit code\n" +
			"unchanged: a \"not checked:\" line above the counts (notChecked in json and yaml, a\n" +
			"tool execution notification in sarif). -o sarif writes a SARIF 2.1.0 log for code\n" +
			"scanning, -o junit JUnit XML for CI test reports. Reading a cluster, a terminal shows\n" +
			"one progress line on stderr, a pipe nothing, -v a line per kind read.\n\n" +
			"--diff (with --cluster) says what the manifests change instead: the findings\n" +
			"(denials, relaxed denials, warnings) they introduce, fix and leave unchanged, and per\n" +
			"context path the effective settings before and after, for every path where they\n" +
			"change. Before is the cluster as read; after, the cluster with the manifests applied as\n" +
			"above (a denied policy is not stored). The manifests' policies are judged as check\n" +
			"judges them (before: the stored policy of the name applied unchanged); stored policies\n" +
			"outside the manifests as audit judges them, with the warnings about their targets.\n" +
			"Unchanged findings are listed for the manifests' policies and the stored policies the\n" +
			"change affects (their findings or impact status change, or they supply a setting on a\n" +
			"path that changes); impact statuses that change are listed too. Messages name\n" +
			"policies in every namespace, as audit's and explain's do. --base PATH (repeatable)\n" +
			"compares with manifests instead of a cluster: the state before is what they describe,\n" +
			"every policy in them stored. A kind of the manifests' policies without its CRD (among\n" +
			"the manifests, --base's or the cluster's) is named as check names it. -o text, json,\n" +
			"yaml or sarif (the introduced findings). See docs/gitops-diff.md.",
		RunE: func(*cobra.Command, []string) error {
			if diff.on {
				*code = runCheckDiff(flags, live, diff, cluster, s)
				return nil
			}
			if len(diff.base) > 0 {
				fmt.Fprintf(s.err, "%s: --base is the state --diff compares with; give --diff too\n", progName("check"))
				*code = exitBadInput
				return nil
			}
			*code = runCheck(flags, live, failOnWarning, cluster, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text, json, yaml, wide (a table, a row per policy), sarif or junit"
	cmd.Flags().BoolVar(&failOnWarning, "fail-on-warning", false, "exit 1 when any policy gets a warning or is admitted only by its enforcement mode, as when one is denied")
	cmd.Flags().BoolVar(&live, "cluster", false, "judge against the live cluster's objects and policies too (the connection flags below say which cluster)")
	cmd.Flags().BoolVar(&diff.on, "diff", false, "print what the manifests change (findings introduced, fixed and unchanged; effective settings before and after) against --cluster or --base; exit 1 when anything is introduced")
	cmd.Flags().StringArrayVar(&diff.base, "base", nil, "with --diff and without --cluster: manifests of the state before (a file or a folder's files, repeatable; -R applies)")
	cluster.register(cmd.Flags())
	return cmd
}

func runCheck(flags offlineFlags, live, failOnWarning bool, cluster clusterFlags, s streams) int {
	if !flags.checkOutput("check", s.err, "wide", "sarif", "junit") {
		return exitBadInput
	}
	conf, docs, ok := loadInputs("check", flags, s.in, s.err)
	if !ok {
		return exitBadInput
	}
	var report *check.Report
	var err error
	if live {
		var stored []manifests.Document
		if stored, err = cluster.stored(conf, docs, s.err); err == nil {
			report, err = check.RunOnto(stored, docs, conf.table, conf.settings, cluster.namespace())
		}
	} else {
		report, err = check.RunIn(docs, conf.table, conf.settings, cmp.Or(cluster.overrides.Context.Namespace, "default"))
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("check"), err)
		return exitBadInput
	}
	switch flags.output {
	case "json":
		err = check.WriteJSON(s.out, report)
	case "yaml":
		err = writeStructured(s.out, "yaml", report)
	case "wide":
		err = check.WriteTable(s.out, report)
	case "sarif":
		err = check.WriteSARIF(s.out, report, buildVersion())
	case "junit":
		err = check.WriteJUnit(s.out, report, "check")
	default:
		err = check.WriteText(s.out, report)
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("check"), err)
		return exitBadInput
	}
	if report.Summary.Denied > 0 || (failOnWarning && warned(report)) {
		return exitDenied
	}
	return exitOK
}

// diffFlags are check's --diff and what it compares with besides --cluster: --base.
type diffFlags struct {
	on   bool
	base []string
}

// runCheckDiff is check --diff: the state before is the cluster (or --base's manifests), the
// state after the same with the manifests applied as check applies them.
func runCheckDiff(flags offlineFlags, live bool, diff diffFlags, cluster clusterFlags, s streams) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(s.err, "%s: %s\n", progName("check"), fmt.Sprintf(format, args...))
		return exitBadInput
	}
	switch {
	case !flags.checkOutput("check --diff", s.err, "sarif"):
		return exitBadInput
	case live && len(diff.base) > 0:
		return fail("--diff compares with --cluster or with --base, not both")
	case !live && len(diff.base) == 0:
		return fail("--diff needs the state to compare with: --cluster (the live cluster) or --base PATH (manifests of the state before)")
	case slices.Contains(diff.base, "-"):
		return fail("--base reads files and folders, not standard input")
	}
	conf, docs, ok := loadInputs("check", flags, s.in, s.err)
	if !ok {
		return exitBadInput
	}
	var stored []manifests.Document
	var err error
	namespace := cmp.Or(cluster.overrides.Context.Namespace, "default")
	if live {
		namespace = cluster.namespace()
		stored, err = cluster.stored(conf, docs, s.err)
	} else {
		stored, err = manifests.Read(diff.base, nil, manifests.Options{Recursive: flags.recursive})
		if err != nil {
			err = fmt.Errorf("--base: %w", err)
		}
	}
	var report *check.DiffReport
	if err == nil {
		report, err = check.Diff(stored, docs, conf.table, conf.settings, namespace)
	}
	if err != nil {
		return fail("%v", err)
	}
	switch flags.output {
	case "json":
		err = check.WriteDiffJSON(s.out, report)
	case "yaml":
		err = writeStructured(s.out, "yaml", report)
	case "sarif":
		err = check.WriteDiffSARIF(s.out, report, buildVersion())
	default:
		err = check.WriteDiffText(s.out, report)
	}
	if err != nil {
		return fail("writing output: %v", err)
	}
	if report.Introduces() {
		return exitDenied
	}
	return exitOK
}

// warned reports a policy with a warning, or admitted only by its enforcement mode.
func warned(r *check.Report) bool {
	for _, res := range r.Results {
		if len(res.Warnings) > 0 || len(res.Relaxed) > 0 {
			return true
		}
	}
	return false
}

// loadInputs reads the configuration and the manifests for an offline command, reporting
// unusable input on stderr.
func loadInputs(cmd string, flags offlineFlags, stdin io.Reader, stderr io.Writer) (*configuration, []manifests.Document, bool) {
	conf, err := loadConfig(flags.configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName(cmd), err)
		return nil, nil, false
	}
	docs, err := flags.read(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName(cmd), err)
		return nil, nil, false
	}
	return conf, docs, true
}

// configuration is what --config sets: the kind table (built-in rows plus the file's) and
// the enforcement and message settings.
type configuration struct {
	table    *kinds.KindTable
	settings *rules.Config
}

// configFlagHelp describes --config the same way in every command.
const configFlagHelp = "YAML config file: kind rows that add to or replace the built-in table, enforcement modes, message settings (docs/config.md)"

// loadConfig returns the built-in table plus an optional config file's rows and settings.
func loadConfig(configFile string) (*configuration, error) {
	conf := &configuration{table: kinds.BuiltinKindTable()}
	if configFile == "" {
		return conf, nil
	}
	data, err := os.ReadFile(configFile)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	settings, err := rules.LoadConfig(data, configFile, conf.table)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	conf.settings = settings
	return conf, nil
}
