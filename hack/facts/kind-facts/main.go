// Command kindfacts reads the CRDs of the policy kinds whose implementation's Go module the
// module proxy does not serve (internal/kindsdrift.DefaultRepoSources) from local git clones
// of their repositories, and writes the facts the kinds-drift comparison reads of each
// (target fields, maxItems, target kinds and groups, per-field target rules, namespaces,
// reference fields, served and storage versions) into testdata/kindfacts, one file per
// kind, stamped with repository, path and commit. The CRDs themselves are never copied.
//
// CI cannot fetch the repositories: it compares the facts kept here. Re-reading one
// repository at a newer release is one command, `make kind-facts AT=name=ref` (recorded in
// testdata/kindfacts/refs.yaml); `make kinds-drift` then prints where the rows disagree.
//
// The clones are looked for under -mirror (or $KINDFACTS_MIRROR) as <owner>+<name>/repo,
// <owner>+<name> or <name>.git, bare or not; `git clone --bare` of each repository makes one.
// It exits 2 when a repository cannot be read.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/kindsdrift"
)

func main() {
	mirror := flag.String("mirror", os.Getenv("KINDFACTS_MIRROR"), "directory holding a git clone of each repository (default $KINDFACTS_MIRROR)")
	at := flag.String("at", "", "comma-separated name=ref: read these sources at another tag or commit, and record it in "+kindsdrift.RefsFile)
	only := flag.String("only", "", "comma-separated source names to read (default: all)")
	out := flag.String("out", kindsdrift.FactsDir, "where the fact files are written")
	flag.Parse()
	if err := run(*mirror, *at, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "kind-facts:", err)
		os.Exit(2)
	}
}

func run(mirror, at, only, out string) error {
	if mirror == "" {
		return fmt.Errorf("no -mirror or KINDFACTS_MIRROR: a directory with a git clone of each of %s", repoNames())
	}
	refs, err := kindsdrift.LoadRefs(out)
	if err != nil {
		return err
	}
	sources := kindsdrift.DefaultRepoSources()
	names := map[string]bool{}
	for _, s := range sources {
		names[s.Name] = true
	}
	for _, kv := range splitList(at) {
		name, ref, ok := strings.Cut(kv, "=")
		if !ok || !names[name] || ref == "" {
			return fmt.Errorf("-at %q: want name=ref, name one of %s", kv, strings.Join(sortedNames(names), ", "))
		}
		refs[name] = ref
	}
	want := splitList(only)
	for _, n := range want {
		if !names[n] {
			return fmt.Errorf("-only %q: not a source (%s)", n, strings.Join(sortedNames(names), ", "))
		}
	}
	rows := kinds.BuiltinKindTable().Rows()
	ctx := context.Background()
	for _, src := range sources {
		if len(want) > 0 && !slices.Contains(want, src.Name) {
			continue
		}
		ref := refs[src.Name]
		if ref == "" {
			return fmt.Errorf("%s: no ref in %s", src.Name, filepath.Join(out, kindsdrift.RefsFile))
		}
		gitDir, err := kindsdrift.GitDir(mirror, src.Repo)
		if err != nil {
			return err
		}
		facts, err := kindsdrift.ReadRepo(ctx, gitDir, src, ref, rows)
		if err != nil {
			return err
		}
		if err := kindsdrift.WriteFactFiles(out, src, facts); err != nil {
			return err
		}
		var kindNames []string
		commit := ""
		for _, f := range facts {
			kindNames = append(kindNames, f.Kind)
			commit = f.Commit
		}
		if len(commit) > 12 {
			commit = commit[:12]
		}
		fmt.Printf("%s: %s@%s (%s): %d kinds: %s\n", src.Name, src.Repo, ref, commit, len(facts), strings.Join(kindNames, ", "))
	}
	return kindsdrift.WriteRefs(out, refs)
}

func splitList(s string) []string {
	var outList []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			outList = append(outList, v)
		}
	}
	return outList
}

func sortedNames(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

func repoNames() string {
	var out []string
	for _, s := range kindsdrift.DefaultRepoSources() {
		if !slices.Contains(out, s.Repo) {
			out = append(out, s.Repo)
		}
	}
	return strings.Join(out, ", ")
}
