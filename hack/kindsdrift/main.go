// Command kindsdrift prints, per built-in policy kind, where its row contradicts the CRD its
// implementation ships at a given module version (`make kinds-drift EG_VERSION=v1.x.y`).
// It exits 1 when it finds drift, 2 when a module cannot be read.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/policyattachment/webhook/internal/kindsdrift"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

func main() {
	sources := kindsdrift.DefaultSources()
	versions := make([]*string, len(sources))
	for i, s := range sources {
		versions[i] = flag.String(s.Name, s.Version, "version of "+s.Module+" to read the CRDs of")
	}
	facts := flag.Bool("facts", false, "also print the facts read from each checked CRD")
	flag.Parse()
	for i := range sources {
		sources[i].Version = *versions[i]
	}

	res, err := kindsdrift.Check(context.Background(), kinds.BuiltinKindTable().Rows(), sources)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kinds-drift:", err)
		os.Exit(2)
	}
	byKind := map[string][]kindsdrift.Drift{}
	for _, d := range res.Drift {
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	var checked []string
	for k := range res.Checked {
		checked = append(checked, k)
	}
	sort.Strings(checked)
	for _, k := range checked {
		fmt.Printf("%s (%s): %d drift\n", k, res.Checked[k], len(byKind[k]))
		if *facts {
			f := res.Facts[k]
			fmt.Printf("  facts at %s: targetRefFields %v, maxTargetRefs %d, targetKinds %v, targetGroups %q, fieldTargetKinds %v, exclusiveFields %v, selectorsExclusive %v, targetNamespace %s, references %v\n",
				f.Version, f.TargetRefFields, f.MaxTargetRefs, f.TargetKinds, f.TargetGroups, f.FieldTargetKinds, f.ExclusiveFields, f.SelectorsExclusive, f.TargetNamespace, f.References)
		}
		for _, d := range byKind[k] {
			item := d.Fact
			if d.Item != "" {
				item += " " + d.Item
			}
			fmt.Printf("  %-40s row: %s; CRD: %s\n", item, d.Row, d.CRD)
		}
	}
	var unchecked []string
	for k := range res.Unchecked {
		unchecked = append(unchecked, k)
	}
	sort.Strings(unchecked)
	for _, k := range unchecked {
		fmt.Printf("%s: unchecked (%s)\n", k, res.Unchecked[k])
	}
	fmt.Printf("%d kinds checked, %d unchecked, %d drift\n", len(checked), len(unchecked), len(res.Drift))
	if len(res.Drift) > 0 {
		os.Exit(1)
	}
}
