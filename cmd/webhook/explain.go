package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

func newExplainCommand(s streams, code *int) *cobra.Command {
	var flags offlineFlags
	var target string
	cmd := &cobra.Command{
		Use:   "explain -f PATH [-f PATH]... [--target KIND/NAMESPACE/NAME] [--config FILE] [-o text|json|yaml]",
		Short: "Print the effective policies and each policy's impact, for manifests read as the cluster state",
		Long: "Reads the manifests as the cluster state (every policy in them, as if stored) and prints\n" +
			"the effective policy of every policy kind on every context path (or those through\n" +
			"--target), with the policy that supplied each setting, and each policy's impact status\n" +
			"(Enforced, PartiallyEnforced, Overridden, NoTargets) over the whole state. Use\n" +
			"`webhook check` for what would be admitted. Exit 0, or 2 on unusable input.",
		RunE: func(*cobra.Command, []string) error {
			*code = runExplain(flags, target, s)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().StringVar(&target, "target", "", "only paths through one object: KIND/NAMESPACE/NAME (KIND/NAME for cluster-scoped kinds)")
	return cmd
}

func runExplain(flags offlineFlags, target string, s streams) int {
	if !flags.checkOutput("explain", s.err) {
		return exitBadInput
	}
	var key *policy.TargetKey
	if target != "" {
		k, err := topology.ParseTarget(target)
		if err != nil {
			fmt.Fprintf(s.err, "webhook explain: --target: %v\n", err)
			return exitBadInput
		}
		key = &k
	}
	conf, docs, ok := loadInputs("explain", flags.paths, flags.configFile, s.in, s.err)
	if !ok {
		return exitBadInput
	}
	snap, err := check.State(docs, conf.table)
	if err != nil {
		fmt.Fprintf(s.err, "webhook explain: %v\n", err)
		return exitBadInput
	}
	ex := impact.Explain(snap, conf.table, key)
	if flags.output == "text" {
		err = writeExplanation(s.out, ex)
	} else {
		err = writeStructured(s.out, flags.output, ex)
	}
	if err != nil {
		fmt.Fprintf(s.err, "webhook explain: writing output: %v\n", err)
		return exitBadInput
	}
	return exitOK
}

// writeExplanation prints the explanation the way `kubectl describe` reads.
func writeExplanation(w io.Writer, ex impact.Explanation) error {
	var b strings.Builder
	b.WriteString("Policies:\n")
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
		settings := make([]string, 0, len(p.Sources))
		for s := range p.Sources {
			settings = append(settings, s)
		}
		sort.Strings(settings)
		for _, s := range settings {
			fmt.Fprintf(&b, "    %-24s %s  (from %s)\n", s+":", renderSetting(p.Effective, s), p.Sources[s])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderSetting shows the value of a dotted setting inside the effective spec.
func renderSetting(effective map[string]any, dotted string) string {
	var v any = effective
	for _, seg := range strings.Split(dotted, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		v = m[seg]
	}
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
