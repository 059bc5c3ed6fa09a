package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func newKindsCommand(s streams, code *int) *cobra.Command {
	var configFile, output string
	var live bool
	var cluster clusterFlags
	cmd := &cobra.Command{
		Use:   "kinds [--config FILE] [--cluster] [-o text|json|yaml]",
		Short: "Print the kind table: every policy kind known and what is enforced for it",
		Long: "Prints the kind table: the built-in rows plus those of --config, as Markdown tables\n" +
			"(text: the kinds, then the implementations and the GatewayClass controllers each serves)\n" +
			"or as the rows themselves (json, yaml). Kinds discovered from CRD labels at run time are\n" +
			"not listed.\n\n" +
			"With --cluster, compares each built-in row with the CRD the cluster runs for its kind\n" +
			"(one GET per kind the cluster serves) and prints, per kind whose CRD is installed, the\n" +
			"release the row was read at, the CRD's name and the release it says it comes from\n" +
			"(Gateway API's bundle-version annotation, a Helm chart's labels), and every difference.\n" +
			"A difference where the CRD admits more is one the webhook judges by the CRD: a policy\n" +
			"relying on it is admitted with a CRDDrift warning instead of denied.",
		RunE: func(*cobra.Command, []string) error {
			*code = runKinds(configFile, output, live, cluster, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", configFlagHelp)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text (a Markdown table; with --cluster, a list per kind), json or yaml")
	cmd.Flags().BoolVar(&live, "cluster", false, "compare the built-in rows with the CRDs the live cluster runs (the connection flags below say which)")
	cluster.registerConnection(cmd.Flags())
	return cmd
}

func runKinds(configFile, output string, live bool, cluster clusterFlags, s streams) int {
	conf, err := loadConfig(configFile)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	if output != "text" && output != "json" && output != "yaml" {
		fmt.Fprintf(s.err, "%s: --output must be text, json or yaml, not %q\n", progName("kinds"), output)
		return exitBadInput
	}
	if live {
		return runKindsOnCluster(conf, output, cluster, s)
	}
	if output == "text" {
		fmt.Fprint(s.out, kinds.KindTableMarkdown(conf.table))
		fmt.Fprint(s.out, "\nPolicies of a kind that names implementations take effect only through the Gateways of\n"+
			"GatewayClasses those serve (the others: every Gateway). A config file's `implementations`\n"+
			"entry of the same name replaces the controller names.\n\n")
		fmt.Fprint(s.out, kinds.ImplementationsMarkdown(conf.table))
		return exitOK
	}
	if err := writeStructured(s.out, output, conf.table.Rows()); err != nil {
		fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	return exitOK
}

// runKindsOnCluster is kinds --cluster: each built-in kind whose CRD the cluster runs, its
// row's release, the CRD's, and every difference.
func runKindsOnCluster(conf *configuration, output string, cluster clusterFlags, s streams) int {
	cfg, err := cluster.restConfig()
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	if err := clusterstate.UseInstalledCRDs(ctx, cfg, conf.table); err != nil {
		fmt.Fprintf(s.err, "%s: reading the cluster: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	drift := kinds.DriftOf(conf.table, false)
	if output == "text" {
		err = writeKindDrift(s.out, drift)
	} else {
		if drift == nil {
			drift = []kinds.KindDrift{}
		}
		err = writeStructured(s.out, output, drift)
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("kinds"), err)
		return exitBadInput
	}
	return exitOK
}

// writeKindDrift prints each installed kind's heading and its differences, then a count.
func writeKindDrift(w io.Writer, drift []kinds.KindDrift) error {
	widened := 0
	for _, k := range drift {
		if _, err := fmt.Fprintln(w, k.Heading()); err != nil {
			return err
		}
		if len(k.Drift) == 0 {
			fmt.Fprintln(w, "    no difference")
		}
		for _, d := range k.Drift {
			if d.Widened {
				widened++
			}
			fmt.Fprintln(w, "    "+d.String())
		}
	}
	_, err := fmt.Fprintf(w, "%d built-in kinds have a CRD installed: %d differences the webhook judges by the CRD\n", len(drift), widened)
	return err
}
