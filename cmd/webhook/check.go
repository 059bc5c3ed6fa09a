package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
)

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var flags offlineFlags
	flags.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: webhook check -f PATH [-f PATH]... [--config FILE] [-o text|json]\n\n"+
			"Admits the policies in the manifests one by one, in document order, against every\n"+
			"non-policy object and the policies admitted before them. Exit 0 when all are allowed,\n"+
			"1 when any is denied, 2 on unusable input.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if done, code := parseFlags(fs, args); done {
		return code
	}
	if !flags.checkOutput("check", stderr) {
		return exitBadInput
	}
	table, docs, ok := loadInputs("check", flags.paths, flags.configFile, stdin, stderr)
	if !ok {
		return exitBadInput
	}
	report, err := check.Run(docs, table)
	if err != nil {
		fmt.Fprintf(stderr, "webhook check: %v\n", err)
		return exitBadInput
	}
	if flags.output == "json" {
		err = check.WriteJSON(stdout, report)
	} else {
		err = check.WriteText(stdout, report)
	}
	if err != nil {
		fmt.Fprintf(stderr, "webhook check: writing output: %v\n", err)
		return exitBadInput
	}
	if report.Summary.Denied > 0 {
		return exitDenied
	}
	return exitOK
}

// loadInputs reads the kind table and the manifests for an offline command, reporting
// unusable input on stderr.
func loadInputs(cmd string, paths []string, configFile string, stdin io.Reader, stderr io.Writer) (*rules.KindTable, []manifests.Document, bool) {
	table, err := loadTable(configFile)
	if err != nil {
		fmt.Fprintf(stderr, "webhook %s: %v\n", cmd, err)
		return nil, nil, false
	}
	docs, err := manifests.Read(paths, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "webhook %s: %v\n", cmd, err)
		return nil, nil, false
	}
	return table, docs, true
}

// loadTable returns the built-in table plus the rows of an optional config file.
func loadTable(configFile string) (*rules.KindTable, error) {
	table := rules.BuiltinKindTable()
	if configFile == "" {
		return table, nil
	}
	data, err := os.ReadFile(configFile)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	if err := table.Load(data, configFile); err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	return table, nil
}
