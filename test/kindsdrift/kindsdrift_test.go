package kindsdrift

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// uncheckedAtOlder is, for each further release a source is checked at (AlsoAt), the
// built-in kinds of its groups that release ships no CRD for, and why.
var uncheckedAtOlder = map[string]map[string]string{
	"gateway-api@v1.6.3": {
		"gateway.networking.x-k8s.io/XTelemetryPolicy": "its source ships no CRD for it",
	},
}

// TestBuiltinRowsAgainstCRDs reads the CRDs of DefaultSources from the module cache
// (downloading them once), in every pass (each source's Version, then each of its AlsoAt
// releases), and fails on drift KnownDrift does not list, on a listed drift no pass shows,
// on a built-in kind that is neither checked nor listed as unchecked, and on a CRD labelled
// gateway.networking.k8s.io/policy that no row describes.
func TestBuiltinRowsAgainstCRDs(t *testing.T) {
	facts, err := LoadAllFactFiles(filepath.Join("..", "..", FactsDir))
	require.NoError(t, err)
	passes, err := CheckPasses(context.Background(), kinds.BuiltinKindTable().Rows(), DefaultSources(), facts)
	if err != nil {
		if os.Getenv("CI") == "" && isFetchError(err) {
			t.Skipf("the implementations' CRD modules cannot be fetched (CI unset, so skipped; in CI this fails): %v", err)
		}
		t.Fatalf("reading the implementations' CRDs from their Go modules: %v\n"+
			"The check needs the module proxy once (then the module cache): `go mod download <module>@<version>` for each of DefaultSources.", err)
	}
	require.Len(t, passes, 2, "every source at its Version, then Gateway API at v1.6.3")

	var unexpected []string
	seen := map[string]bool{}
	for _, p := range passes {
		for _, d := range p.Result.Drift {
			seen[d.Key()] = true
			if _, ok := KnownDrift[d.Key()]; !ok {
				unexpected = append(unexpected, p.Name()+": "+d.String())
			}
		}
		var unlisted []string
		for _, u := range p.Unlisted {
			if _, known := KnownUnlisted[unlistedKind(u)]; !known {
				unlisted = append(unlisted, u)
			}
			seen["unlisted "+unlistedKind(u)] = true
		}
		assert.Empty(t, unlisted, "%s: CRDs labelled %s with no built-in row: add a row for each (or list it in KnownUnlisted, with why)", p.Name(), PolicyLabel)
	}
	sort.Strings(unexpected)
	assert.Empty(t, unexpected, "drift between the rows and their CRDs (fix the row, or list the drift in KnownDrift with its reason):\n%s", strings.Join(unexpected, "\n"))

	var gone []string
	for k := range KnownDrift {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	assert.Empty(t, gone, "KnownDrift lists drift that is gone (the row was fixed): remove these entries")
	gone = nil

	for k := range KnownUnlisted {
		if !seen["unlisted "+k] {
			gone = append(gone, "KnownUnlisted "+k)
		}
	}
	sort.Strings(gone)
	assert.Empty(t, gone, "KnownUnlisted lists a kind that now has a row or is gone: remove these entries")

	first := passes[0]
	var targetless []string
	for _, u := range first.Targetless {
		targetless = append(targetless, unlistedKind(u))
	}
	// Labelled, yet no object of it can name a target: no row needed, none judged.
	assert.Equal(t, []string{"agentgateway.dev/AgentgatewayParameters"}, targetless)
	assert.Empty(t, first.Result.Unchecked, "built-in kinds with no CRD to check them against: add a source or fact files (make kind-facts), or say in NoCRD why none exists")
	assert.Equal(t, sortedKeys(NoCRD), sortedKeys(first.Result.NoCRD), "NoCRD lists only built-in kinds")
	for k, where := range first.Result.Checked {
		t.Logf("%s checked against %s", k, where)
	}
	for _, p := range passes[1:] {
		got := map[string]string{}
		for k, why := range p.Result.Unchecked {
			if group, _, _ := strings.Cut(k, "/"); p.Serves(group) {
				got[k] = why
			}
		}
		assert.Equal(t, uncheckedAtOlder[p.Name()], got, "%s: built-in kinds of its groups it ships no CRD for", p.Name())
		assert.NotEmpty(t, p.Result.Checked, p.Name())
		for k, where := range p.Result.Checked {
			t.Logf("%s checked against %s", k, where)
		}
	}
}

// Passes reads every source at its Version first, then each further release alone.
func TestPasses(t *testing.T) {
	a := Source{Name: "a", Version: "v2", AlsoAt: []string{"v1", "v0"}}
	b := Source{Name: "b", Version: "v9"}
	got := Passes([]Source{a, b})
	assert.Equal(t, [][]Source{
		{{Name: "a", Version: "v2"}, {Name: "b", Version: "v9"}},
		{{Name: "a", Version: "v1"}},
		{{Name: "a", Version: "v0"}},
	}, got)
	assert.Equal(t, []string{"v1", "v0"}, a.AlsoAt, "the sources given are not changed")
	assert.Equal(t, "a@v2, b@v9", Pass{Sources: got[0]}.Name())
}

// A policy-labelled CRD no row describes is listed, whatever its group, and apart when its
// schema has no target field; labelled CRDs with a row, CRDs without the label and other
// documents are not.
func TestUnlistedPolicyKinds(t *testing.T) {
	dir := t.TempDir()
	crd := func(group, kind, labels string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n" + labels +
			"spec:\n  group: " + group + "\n  names: {kind: " + kind + "}\n  versions: [{name: v1, served: true, storage: true}]\n"
	}
	labelled := "  labels:\n    gateway.networking.k8s.io/policy: Direct\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "crds"), 0o755))
	for name, body := range map[string]string{
		"a.yaml": crd("example.io", "NewPolicy", labelled) + "---\n" + crd("example.io", "KnownPolicy", labelled),
		"b.yaml": crd("other.example.io", "OtherPolicy", "  labels:\n    gateway.networking.k8s.io/policy: Inherited\n"),
		"c.yaml": crd("example.io", "Route", "  labels:\n    app: x\n") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: gateway.networking.k8s.io/policy}\n",
		// agentgateway's AgentgatewayParameters at 75b4e6ce: labelled Direct, no target field.
		"d.yaml": strings.Replace(crd("example.io", "GatewayParameters", labelled), "storage: true}",
			"storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {image: {type: string}}}}}}}", 1) +
			"---\n" + strings.Replace(crd("example.io", "TargetedPolicy", labelled), "storage: true}",
			"storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {targetRefs: {type: array}}}}}}}", 1),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "crds", name), []byte(body), 0o644))
	}
	src := Source{Name: "s", Module: "example.io/m", Version: "v1.0.0", Globs: []string{"crds/*.yaml"}, Groups: []string{"example.io"}}
	rows := []*kinds.KindRow{{Group: "example.io", Kind: "KnownPolicy"}}
	got, targetless, err := UnlistedPolicyKinds(dir, src, rows)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"example.io/NewPolicy (example.io/m@v1.0.0 crds/a.yaml)",
		"example.io/TargetedPolicy (example.io/m@v1.0.0 crds/d.yaml)",
		"other.example.io/OtherPolicy (example.io/m@v1.0.0 crds/b.yaml)",
	}, got)
	assert.Equal(t, []string{"example.io/GatewayParameters (example.io/m@v1.0.0 crds/d.yaml)"}, targetless)

	crds, err := LoadCRDs(dir, src)
	require.NoError(t, err)
	assert.Equal(t, "Direct", crds["example.io/NewPolicy"].PolicyLabel)
	assert.Equal(t, "", crds["example.io/Route"].PolicyLabel)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isFetchError tells a module that cannot be downloaded from a CRD that cannot be read.
func isFetchError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "go mod download")
}

func TestModuleDirReportsAFetchError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	_, err := ModuleDir(context.Background(), "example.invalid/no-such-module", "v0.0.1")
	require.Error(t, err)
	assert.True(t, isFetchError(err), "%v", err)
	assert.False(t, isFetchError(errors.New("no CRD file matches")))
}

func TestEscapePath(t *testing.T) {
	assert.Equal(t, "github.com/!azure/go-!s!d!k", escapePath("github.com/Azure/go-SDK"))
}

// The Gateway API CRDs checked first are those of the version go.mod requires; v1.6.3 is
// checked too, as clusters run it.
func TestGatewayAPISourceFollowsGoMod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/gateway-api (v\S+)`).FindSubmatch(data)
	require.NotNil(t, m, "go.mod requires no sigs.k8s.io/gateway-api")
	for _, s := range DefaultSources() {
		if s.Module == "sigs.k8s.io/gateway-api" {
			assert.Equal(t, string(m[1]), s.Version, "DefaultSources' Gateway API version")
			assert.Equal(t, []string{"v1.6.3"}, s.AlsoAt, "the older Gateway API release the rows are checked at")
			return
		}
	}
	t.Fatal("DefaultSources has no sigs.k8s.io/gateway-api")
}

// A built-in row checked against a source says it was read at that source's version: its
// readAt is what `webhook kinds --cluster` and the CRDDrift warnings cite.
func TestCheckedRowsSayTheyWereReadAtTheirSource(t *testing.T) {
	for _, src := range DefaultSources() {
		for _, row := range kinds.BuiltinKindTable().Rows() {
			if slices.Contains(src.Groups, row.Group) {
				assert.True(t, strings.HasSuffix(row.ReadAt, " "+src.Version), "%s/%s readAt %q, checked against %s@%s", row.Group, row.Kind, row.ReadAt, src.Module, src.Version)
			}
		}
	}
}

// The fact files are those `make kind-facts` writes for DefaultRepoSources at the refs
// refs.yaml names: a folder per source, each file stamped with the source's repository and
// ref, holding only kinds the source reads; and a built-in row checked against a fact file
// that names its release (readAt) names that repository and ref.
func TestFactFilesFollowTheirSources(t *testing.T) {
	dir := filepath.Join("..", "..", FactsDir)
	refs, err := LoadRefs(dir)
	require.NoError(t, err)
	bySource, err := LoadFactFiles(dir)
	require.NoError(t, err)
	var names []string
	for _, src := range DefaultRepoSources() {
		names = append(names, src.Name)
		require.NotEmpty(t, refs[src.Name], "%s: no ref in %s", src.Name, RefsFile)
		facts := bySource[src.Name]
		require.NotEmpty(t, facts, "%s: no fact files: run make kind-facts", src.Name)
		for _, f := range facts {
			assert.Equal(t, src.Repo, f.Repository, "%s/%s", src.Name, f.Kind)
			assert.Equal(t, refs[src.Name], f.Ref, "%s/%s: read at another ref than %s names: run make kind-facts", src.Name, f.Kind, RefsFile)
			assert.Regexp(t, `^[0-9a-f]{40}$`, f.Commit, "%s/%s", src.Name, f.Kind)
			assert.True(t, src.reads(f.Group, f.Group+"/"+f.Kind), "%s: %s/%s is not a kind it reads", src.Name, f.Group, f.Kind)
			assert.NotEmpty(t, f.Served, "%s/%s", src.Name, f.Kind)
			for _, v := range f.Served {
				assert.Contains(t, f.Versions, v, "%s/%s: no facts at served version %s", src.Name, f.Kind, v)
			}
		}
	}
	assert.ElementsMatch(t, names, sortedKeys(refs), "%s names exactly the sources", RefsFile)
	var folders []string
	for n := range bySource {
		folders = append(folders, n)
	}
	assert.ElementsMatch(t, names, folders, "one folder of fact files per source")

	facts, err := LoadAllFactFiles(dir)
	require.NoError(t, err)
	byKind := map[string]FactFile{}
	for _, f := range facts {
		byKind[f.Group+"/"+f.Kind] = f
	}
	for _, row := range kinds.BuiltinKindTable().Rows() {
		f, ok := byKind[row.Group+"/"+row.Kind]
		if !ok || row.ReadAt == "" {
			continue
		}
		repo, ref, _ := strings.Cut(row.ReadAt, " ")
		assert.True(t, strings.EqualFold(repo, f.Repository) && ref == f.Ref, "%s/%s readAt %q, checked against %s@%s", row.Group, row.Kind, row.ReadAt, f.Repository, f.Ref)
	}
}
