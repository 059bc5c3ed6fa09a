package main

import (
	"errors"
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
	var (
		paths      []string
		configFile string
		output     string
	)
	fs.StringArrayVarP(&paths, "filename", "f", nil, "file or folder of manifests (repeatable; folders are read recursively, \"-\" reads standard input)")
	fs.StringVar(&configFile, "config", "", "YAML file of kind rows that add to or replace the built-in kind table")
	fs.StringVarP(&output, "output", "o", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: webhook check -f PATH [-f PATH]... [--config FILE] [-o text|json]\n\n"+
			"Admits the policies in the manifests one by one, in document order, against every\n"+
			"non-policy object and the policies admitted before them. Exit 0 when all are allowed,\n"+
			"1 when any is denied, 2 on unusable input.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitBadInput
	}
	if output != "text" && output != "json" {
		fmt.Fprintf(stderr, "webhook check: --output must be text or json, not %q\n", output)
		return exitBadInput
	}
	table, docs, ok := loadInputs("check", paths, configFile, stdin, stderr)
	if !ok {
		return exitBadInput
	}
	report, err := check.Run(docs, table)
	if err != nil {
		fmt.Fprintf(stderr, "webhook check: %v\n", err)
		return exitBadInput
	}
	if output == "json" {
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
