package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

func newExplainCommand(s streams, code *int) *cobra.Command {
	var flags offlineFlags
	var cluster clusterFlags
	var target string
	var live bool
	cmd := &cobra.Command{
		Use:   "explain [-f PATH]... [-R] [-k DIR] [--cluster] [--target KIND/NAME [-n NAMESPACE]] [--config FILE] [-o text|json|yaml|dot|mermaid|html]",
		Short: "Print the effective policies and each policy's impact, on a live cluster or manifests",
		Long: "Reads the cluster state (with --cluster, the live cluster's objects and policies, with\n" +
			"the manifests laid over them; otherwise the manifests alone, every policy in them as if\n" +
			"stored) and prints the effective policy of every policy kind on every context path (or\n" +
			"those through --target), with the policy that supplied each setting, and each\n" +
			"policy's impact status (Enforced, PartiallyEnforced, Overridden, NoTargets) over the\n" +
			"whole state, or over the target's paths. With --cluster and --target it reads only what\n" +
			"those paths need. --target takes kubectl's form, KIND/NAME in -n's namespace (httproute/store,\n" +
			"gateways/gw, gtw/gw), or KIND/NAMESPACE/NAME. CustomResourceDefinitions among the\n" +
			"manifests (with --cluster, the cluster's) apply their defaults to the manifests'\n" +
			"objects, and a document they refuse is left out, as the cluster would not hold it,\n" +
			"and said on stderr. Use `webhook check` for what would be\n" +
			"admitted. Exit 0, or 2 on unusable input or an unreachable cluster.",
		RunE: func(*cobra.Command, []string) error {
			*code = runExplain(flags, live, cluster, target, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text, json, yaml, dot (Graphviz), mermaid (the hierarchy with each policy attached, coloured by status) or html (one self-contained page with search and filters)"
	cmd.Flags().BoolVar(&live, "cluster", false, "read the live cluster (the connection flags below say which); -f manifests are laid over it")
	cmd.Flags().StringVar(&target, "target", "", "only paths through one object: KIND/NAME in -n's namespace, or KIND/NAMESPACE/NAME (KIND/NAME for cluster-scoped kinds)")
	cluster.register(cmd.Flags())
	return cmd
}

func runExplain(flags offlineFlags, live bool, cluster clusterFlags, target string, s streams) int {
	if !flags.checkOutput("explain", s.err, explainview.Formats...) {
		return exitBadInput
	}
	if !live && !flags.given() {
		fmt.Fprintf(s.err, "%s: give manifests (-f PATH) or --cluster\n", progName("explain"))
		return exitBadInput
	}
	var key *policy.TargetKey
	if target != "" {
		k, err := topology.ParseTargetIn(target, cluster.namespace())
		if err != nil {
			fmt.Fprintf(s.err, "%s: --target: %v\n", progName("explain"), err)
			return exitBadInput
		}
		key = &k
	}
	conf, err := loadConfig(flags.configFile)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("explain"), err)
		return exitBadInput
	}
	state, err := explainState(flags, live, cluster, conf, key, s)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("explain"), err)
		return exitBadInput
	}
	snap := state.Snapshot()
	ex := impact.Explain(snap, conf.table, key)
	switch {
	case flags.output == "text":
		err = writeExplanation(s.out, ex, key)
	case slices.Contains(explainview.Formats, flags.output):
		err = explainview.Write(s.out, flags.output, snap, ex, key)
	default:
		err = writeStructured(s.out, flags.output, ex)
	}
	if err != nil {
		fmt.Fprintf(s.err, "%s: writing output: %v\n", progName("explain"), err)
		return exitBadInput
	}
	return exitOK
}

// writeExplanation prints the explanation the way `kubectl describe` reads; with a target,
// each policy's status is over the paths through it.
func writeExplanation(w io.Writer, ex impact.Explanation, target *policy.TargetKey) error {
	var b strings.Builder
	if target != nil {
		fmt.Fprintf(&b, "Policies on the paths through %s:\n", target)
	} else {
		b.WriteString("Policies:\n")
	}
	if len(ex.Policies) == 0 {
		b.WriteString("  <none>\n")
	}
	for _, p := range ex.Policies {
		fmt.Fprintf(&b, "  %s %s/%s\n", p.Kind, p.Namespace, p.Name)
		fmt.Fprintf(&b, "    Status:         %s (%d %s)\n", p.Status, p.Contexts, plural(p.Contexts, "path", "paths"))
		fmt.Fprintf(&b, "    Overrides:      %s\n", listOrNone(p.Overrides))
		fmt.Fprintf(&b, "    Overridden by:  %s\n", listOrNone(p.OverriddenBy))
	}
	b.WriteString("Paths:\n")
	if len(ex.Paths) == 0 {
		b.WriteString("  <none>\n")
	}
	for _, p := range ex.Paths {
		fmt.Fprintf(&b, "  %s: %s\n", p.Kind, strings.Join(p.Path, " > "))
		for _, s := range p.Settings {
			fmt.Fprintf(&b, "    %-24s %s  (from %s)\n", s.Name+":", renderValue(s.Value), s.Source)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderValue shows one setting's value as JSON.
func renderValue(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "<none>"
	}
	return strings.Join(list, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// explainState builds the state explain reads: the manifests; the cluster (with a target,
// only what the paths through it need); or the manifests laid over the whole cluster, which
// may add paths through the target that start anywhere.
func explainState(flags offlineFlags, live bool, cluster clusterFlags, conf *configuration, key *policy.TargetKey, s streams) (*check.StateBuilder, error) {
	switch {
	case !live:
		return flags.state(s.in, conf.table, s.err, "explain")
	case !flags.given() && key != nil:
		around, err := cluster.read(conf, key, s.err)
		if err != nil {
			return nil, err
		}
		return check.StateOf(around, conf.table)
	case !flags.given():
		return cluster.state(conf, s.err)
	}
	docs, err := flags.read(s.in)
	if err != nil {
		return nil, err
	}
	state, err := cluster.state(conf, s.err)
	if err != nil {
		return nil, err
	}
	crds, err := cluster.crds(docs)
	if err != nil {
		return nil, err
	}
	for _, set := range [][]manifests.Document{crds, docs} {
		if err := state.Discover(set); err != nil {
			return nil, err
		}
	}
	state.Judge(noteRefused(s.err, "explain"))
	return state, state.Add(docs)
}
