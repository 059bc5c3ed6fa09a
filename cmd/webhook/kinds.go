package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func newKindsCommand(s streams, code *int) *cobra.Command {
	var configFile, output string
	cmd := &cobra.Command{
		Use:   "kinds [--config FILE] [-o text|json|yaml]",
		Short: "Print the kind table: every policy kind known and what is enforced for it",
		Long: "Prints the kind table: the built-in rows plus those of --config, as Markdown tables\n" +
			"(text: the kinds, then the implementations and the GatewayClass controllers each serves)\n" +
			"or as the rows themselves (json, yaml). Kinds discovered from CRD labels at run time are\n" +
			"not listed.",
		RunE: func(*cobra.Command, []string) error {
			*code = runKinds(configFile, output, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", configFlagHelp)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text (a Markdown table), json or yaml")
	return cmd
}

func runKinds(configFile, output string, s streams) int {
	conf, err := loadConfig(configFile)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	switch output {
	case "json", "yaml":
		if err := writeStructured(s.out, output, conf.table.Rows()); err != nil {
			fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("kinds"), err)
			return exitBadInput
		}
	case "text":
		fmt.Fprint(s.out, kinds.KindTableMarkdown(conf.table))
		fmt.Fprint(s.out, "\nPolicies of a kind that names implementations take effect only through the Gateways of\n"+
			"GatewayClasses those serve (the others: every Gateway). A config file's `implementations`\n"+
			"entry of the same name replaces the controller names.\n\n")
		fmt.Fprint(s.out, kinds.ImplementationsMarkdown(conf.table))
	default:
		fmt.Fprintf(s.err, "%s: --output must be text, json or yaml, not %q\n", progName("kinds"), output)
		return exitBadInput
	}
	return exitOK
}
