// Command kindsdrift prints, per built-in policy kind, where its row contradicts the CRD its
// implementation ships at given module versions (`make kinds-drift EG_VERSION=v1.x.y`), and
// every CRD labelled gateway.networking.k8s.io/policy in those modules that no row describes
// (apart, those whose schema has no target field: the webhook judges none of their objects).
// A flag takes a comma-separated list of versions: the first is read with the other modules,
// each further one in a pass of its own (Gateway API: v1.7.0,v1.6.3 by default, as clusters
// run either). It exits 1 on drift kindsdrift.KnownDrift does not list or on an unlisted
// policy kind, 2 when a module cannot be read.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/kindsdrift"
)

func main() {
	sources := kindsdrift.DefaultSources()
	versions := make([]*string, len(sources))
	for i, s := range sources {
		def := strings.Join(append([]string{s.Version}, s.AlsoAt...), ",")
		versions[i] = flag.String(s.Name, def, "version of "+s.Module+" to read the CRDs of; a comma-separated list checks each further version in a pass of its own")
	}
	facts := flag.Bool("facts", false, "also print the facts read from each checked CRD")
	factsDir := flag.String("facts-dir", kindsdrift.FactsDir, "the fact files of the repositories no module serves (make kind-facts writes them)")
	flag.Parse()
	for i := range sources {
		list := splitVersions(*versions[i])
		if len(list) == 0 {
			fmt.Fprintf(os.Stderr, "kinds-drift: -%s: no version given\n", sources[i].Name)
			os.Exit(2)
		}
		sources[i].Version, sources[i].AlsoAt = list[0], list[1:]
	}

	factFiles, err := kindsdrift.LoadAllFactFiles(*factsDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kinds-drift:", err)
		os.Exit(2)
	}
	passes, err := kindsdrift.CheckPasses(context.Background(), kinds.BuiltinKindTable().Rows(), sources, factFiles)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kinds-drift:", err)
		os.Exit(2)
	}
	failed := false
	for i, p := range passes {
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("== %s\n", p.Name())
		if report(p, i == 0, *facts) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// report prints one pass and says whether it found drift KnownDrift does not list or an
// unlisted policy kind. Rows of groups the pass did not read are listed as unchecked in the
// first pass only.
func report(p kindsdrift.Pass, first, facts bool) bool {
	res := p.Result
	byKind := map[string][]kindsdrift.Drift{}
	for _, d := range res.Drift {
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	var checked []string
	for k := range res.Checked {
		checked = append(checked, k)
	}
	sort.Strings(checked)
	unknown := 0
	for _, k := range checked {
		fmt.Printf("%s (%s): %d drift\n", k, res.Checked[k], len(byKind[k]))
		if facts {
			f := res.Facts[k]
			fmt.Printf("  facts at %s: targetRefFields %v, maxTargetRefs %d, targetKinds %v, targetGroups %q, fieldTargetKinds %v, exclusiveFields %v, selectorsExclusive %v, targetNamespace %s, references %v\n",
				f.Version, f.TargetRefFields, f.MaxTargetRefs, f.TargetKinds, f.TargetGroups, f.FieldTargetKinds, f.ExclusiveFields, f.SelectorsExclusive, f.TargetNamespace, f.References)
		}
		for _, d := range byKind[k] {
			item := d.Fact
			if d.Item != "" {
				item += " " + d.Item
			}
			known := ""
			if why, ok := kindsdrift.KnownDrift[d.Key()]; ok {
				known = " (known: " + why + ")"
			} else {
				unknown++
			}
			fmt.Printf("  %-40s row: %s; CRD: %s%s\n", item, d.Row, d.CRD, known)
		}
	}
	var unchecked []string
	for k, why := range res.Unchecked {
		group, _, _ := strings.Cut(k, "/")
		if first || p.Serves(group) {
			unchecked = append(unchecked, k+": unchecked ("+why+")")
		}
	}
	sort.Strings(unchecked)
	for _, u := range unchecked {
		fmt.Println(u)
	}
	unlisted := 0
	for _, u := range p.Unlisted {
		if why, ok := kindsdrift.KnownUnlisted[strings.Fields(u)[0]]; ok {
			fmt.Printf("%s: labelled %s, no built-in row (known: %s)\n", u, kindsdrift.PolicyLabel, why)
			continue
		}
		unlisted++
		fmt.Printf("%s: labelled %s but no built-in row describes it: add one to pkg/rules/kinds/builtin_kinds.yaml\n", u, kindsdrift.PolicyLabel)
	}
	for _, u := range p.Targetless {
		fmt.Printf("%s: labelled %s but its schema has no target field: no policy kind, the webhook judges none of its objects\n", u, kindsdrift.PolicyLabel)
	}
	// Kinds without a CRD are the same in every pass: said once, in the first.
	var noCRD []string
	for k, why := range res.NoCRD {
		if first {
			noCRD = append(noCRD, k+": no CRD to check it against ("+why+")")
		}
	}
	sort.Strings(noCRD)
	for _, n := range noCRD {
		fmt.Println(n)
	}
	fmt.Printf("%d kinds checked, %d unchecked, %d without a CRD, %d drift (%d not known), %d policy kinds without a row (%d not known), %d labelled but targetless\n",
		len(checked), len(unchecked), len(noCRD), len(res.Drift), unknown, len(p.Unlisted), unlisted, len(p.Targetless))
	return unknown > 0 || unlisted > 0
}

func splitVersions(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
