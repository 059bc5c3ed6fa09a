package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
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
	conf, docs, ok := loadInputs("check", flags.paths, flags.configFile, stdin, stderr)
	if !ok {
		return exitBadInput
	}
	report, err := check.Run(docs, conf.table, conf.settings)
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

// loadInputs reads the configuration and the manifests for an offline command, reporting
// unusable input on stderr.
func loadInputs(cmd string, paths []string, configFile string, stdin io.Reader, stderr io.Writer) (*configuration, []manifests.Document, bool) {
	conf, err := loadConfig(configFile)
	if err != nil {
		fmt.Fprintf(stderr, "webhook %s: %v\n", cmd, err)
		return nil, nil, false
	}
	docs, err := manifests.Read(paths, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "webhook %s: %v\n", cmd, err)
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
