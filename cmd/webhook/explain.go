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
)

func newExplainCommand(s streams, code *int) *cobra.Command {
	var flags offlineFlags
	var cluster clusterFlags
	var target string
	var live bool
	cmd := &cobra.Command{
		Use:   "explain [KIND/NAME [-n NAMESPACE]] [-f PATH]... [-R] [-k DIR] [--cluster] [--config FILE] [-o text|json|yaml|dot|mermaid|html]",
		Short: "Print the effective policies and each policy's impact, on a live cluster or manifests",
		Long: "Reads the cluster state (with --cluster, the live cluster's objects and policies, with\n" +
			"the manifests laid over them; otherwise the manifests alone, every policy in them as if\n" +
			"stored) and prints the effective policy of every policy kind on every context path (or\n" +
			"those through one target), with the policy that supplied each setting, and each\n" +
			"policy's impact status (Enforced, PartiallyEnforced, Overridden, NoTargets, NotServed)\nover the " +
			"whole state, or over the target's paths. The target is named as kubectl names an\n" +
			"object: KIND/NAME in -n's namespace (httproute/store, gateways/gw, gtw/gw), KIND NAME,\n" +
			"or KIND/NAMESPACE/NAME; --target KIND/NAME says the same. A target without manifests\n" +
			"reads the cluster, as kubectl does (--cluster implied). With the cluster and a target it\n" +
			"reads only what the target's paths need. Reading a cluster, a terminal shows one\n" +
			"progress line on stderr, a pipe nothing, -v a line per kind read. CustomResourceDefinitions\n" +
			"among the manifests (with --cluster, the cluster's) apply their defaults to the\n" +
			"manifests' objects, and a document they refuse is left out, as the cluster would not\n" +
			"hold it, and said on stderr. Use `webhook check` for what would be admitted.",
		Example: "  # the effective policies on the paths through one route, as stored now\n" +
			"  " + progName("explain") + " httproute/store -n app\n\n" +
			"  # what a pull request's manifests would make of them\n" +
			"  " + progName("explain") + " gateway/gw -n infra --cluster -f pr/",
		Args: targetArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			*code = runExplain(flags, live, cluster, args, target, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text, json, yaml, dot (Graphviz), mermaid (the hierarchy with each policy attached, coloured by status) or html (one self-contained page: the hierarchy drawn with each policy on its target, search and filters)"
	cmd.Flags().BoolVar(&live, "cluster", false, "read the live cluster (the connection flags below say which); -f manifests are laid over it")
	cmd.Flags().StringVar(&target, "target", "", "only paths through one object, as the KIND/NAME argument names it: KIND/NAME in -n's namespace, or KIND/NAMESPACE/NAME (KIND/NAME for cluster-scoped kinds)")
	cluster.register(cmd.Flags())
	return cmd
}

func runExplain(flags offlineFlags, live bool, cluster clusterFlags, args []string, target string, s streams) int {
	if !flags.checkOutput("explain", s.err, explainview.Formats...) {
		return exitBadInput
	}
	key, err := explainTarget(args, target, cluster.namespace)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("explain"), err)
		return exitBadInput
	}
	if !live && !flags.given() {
		if key == nil {
			fmt.Fprintf(s.err, "%s: give manifests (-f PATH), --cluster, or a target to read from the cluster (KIND/NAME)\n", progName("explain"))
			return exitBadInput
		}
		live = true // a target and no manifests: the cluster's object, as kubectl reads it
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
