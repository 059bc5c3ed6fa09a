package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func runKinds(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("kinds", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", configFlagHelp)
	output := fs.StringP("output", "o", "text", "output format: text (a Markdown table) or json")
	if done, code := parseFlags(fs, args); done {
		return code
	}
	conf, err := loadConfig(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "webhook kinds: %v\n", err)
		return exitBadInput
	}
	switch *output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(conf.table.Rows()); err != nil {
			return exitBadInput
		}
	case "text":
		fmt.Fprint(stdout, kinds.KindTableMarkdown(conf.table))
	default:
		fmt.Fprintf(stderr, "webhook kinds: --output must be text or json, not %q\n", *output)
		return exitBadInput
	}
	return exitOK
}
