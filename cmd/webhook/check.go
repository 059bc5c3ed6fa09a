package main

import (
	"cmp"
	"fmt"
	"io"
	"os"

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
	cmd := &cobra.Command{
		Use:   "check (-f PATH [-f PATH]... [-R] | -k DIR) [--cluster] [--config FILE] [-o text|json|yaml|wide|sarif|junit] [--fail-on-warning]",
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
			"words, and another object they refuse is unusable input; without its CRD, a kind is\n" +
			"judged by the rules alone. -o sarif writes a\n" +
			"SARIF 2.1.0 log for code scanning, -o junit JUnit XML for CI test reports. Exit 0 when\n" +
			"all are allowed, 1 when any is denied (or, with --fail-on-warning, warned about or\n" +
			"admitted only by an enforcement mode), 2 on unusable input or an unreachable cluster.",
		RunE: func(*cobra.Command, []string) error {
			*code = runCheck(flags, live, failOnWarning, cluster, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text, json, yaml, wide (a table, a row per policy), sarif or junit"
	cmd.Flags().BoolVar(&failOnWarning, "fail-on-warning", false, "exit 1 when any policy gets a warning or is admitted only by its enforcement mode, as when one is denied")
	cmd.Flags().BoolVar(&live, "cluster", false, "judge against the live cluster's objects and policies too (the connection flags below say which cluster)")
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
		if stored, err = cluster.read(conf, nil, s.err); err == nil {
			var crds []manifests.Document
			if crds, err = cluster.crds(docs); err == nil {
				report, err = check.RunOnto(append(stored, crds...), docs, conf.table, conf.settings, cluster.namespace())
			}
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
const configFlagHelp = "YAML config file: kind rows that add to or replace the built-in table, enforcement modes, message settings (see README)"

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
