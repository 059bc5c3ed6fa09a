package release

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v1.2.3", "v10.20.30", "v1.2.3-rc.1", "v0.0.0-ci", "v1.0.0-alpha.beta-1"} {
		assert.NoError(t, CheckVersion(v), v)
	}
	for v, want := range map[string]string{
		"":              `version "" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"1.2.3":         `version "1.2.3" is not vMAJOR.MINOR.PATCH[-PRERELEASE] (did you mean v1.2.3?)`,
		"v1.2":          `version "v1.2" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"v01.2.3":       `version "v01.2.3" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"v1.2.3-":       `version "v1.2.3-" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"v1.2.3-01":     `version "v1.2.3-01" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"v1.2.3+build":  `version "v1.2.3+build" is not vMAJOR.MINOR.PATCH[-PRERELEASE] (no build metadata: the version is also the image tag, which cannot hold "+")`,
		"v1.2.3-dirty!": `version "v1.2.3-dirty!" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
	} {
		err := CheckVersion(v)
		if assert.Error(t, err, v) {
			assert.Equal(t, want, err.Error())
		}
	}
	assert.Equal(t, "1.2.3-rc.1", ChartVersion("v1.2.3-rc.1"))
	assert.Equal(t, "policyattachment-webhook-1.2.3.tgz", ChartFile("v1.2.3"))
}

func TestChangelogSection(t *testing.T) {
	for label, tc := range map[string]struct {
		version, want string
		unreleased    bool
	}{
		"a heading without v":                            {version: "v0.2.0", want: "## [0.2.0] - 2026-12-01\n\n### Fixed\n- A bug.\n"},
		"a heading with v, the link references left out": {version: "v0.1.0", want: "## [v0.1.0] - 2026-11-27\n\n### Added\n- The first release.\n"},
		"a pre-release of its own":                       {version: "v0.2.0-rc.1", want: "## [Unreleased]\n\n### Added\n- Something on its way.\n", unreleased: true},
	} {
		t.Run(label, func(t *testing.T) {
			got, unreleased, err := ChangelogSection(testChangelog, tc.version)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.unreleased, unreleased)
		})
	}
	_, _, err := ChangelogSection(testChangelog, "v0.3.0")
	assert.EqualError(t, err, `CHANGELOG.md has no section "## [0.3.0] - YYYY-MM-DD": write what v0.3.0 changes there first (docs/releasing.md)`)
	_, _, err = ChangelogSection("# Changelog\n\n## [0.1.0] - 2026-11-27\n", "v0.2.0-rc.1")
	assert.EqualError(t, err, `CHANGELOG.md has no section "## [0.2.0-rc.1] - YYYY-MM-DD": write what v0.2.0-rc.1 changes there first (docs/releasing.md)`, "no Unreleased section to fall back on")
}

// TestRepositoryChangelog: CHANGELOG.md is in Keep a Changelog's form (a title, an
// Unreleased section, dated version sections newest first) and has a section for the
// chart's own version, so `make release VERSION=v<that>` finds its notes.
func TestRepositoryChangelog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	text := string(data)
	assert.True(t, strings.HasPrefix(text, "# Changelog\n"), "the title")
	var headings []string
	for _, line := range strings.Split(text, "\n") {
		if m := changelogHeading.FindStringSubmatch(line); m != nil {
			headings = append(headings, line)
		}
	}
	require.NotEmpty(t, headings)
	assert.Equal(t, "## [Unreleased]", headings[0])
	for _, h := range headings[1:] {
		assert.Regexp(t, `^## \[\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?\] - \d{4}-\d{2}-\d{2}$`, h)
	}
	chart, err := os.ReadFile(filepath.Join(root, "deploy", "chart", "Chart.yaml"))
	require.NoError(t, err)
	var version string
	for _, line := range strings.Split(string(chart), "\n") {
		if v, ok := strings.CutPrefix(line, "version: "); ok {
			version = strings.TrimSpace(v)
		}
	}
	_, unreleased, err := ChangelogSection(text, "v"+version)
	require.NoError(t, err, "the chart's version %s", version)
	assert.False(t, unreleased)
}

func TestGoPURL(t *testing.T) {
	for _, tc := range []struct{ path, version, want string }{
		{"github.com/spf13/cobra", "v1.10.2", "pkg:golang/github.com/spf13/cobra@v1.10.2"},
		{"github.com/KimMachineGun/automemlimit", "v1.0.1", "pkg:golang/github.com/KimMachineGun/automemlimit@v1.0.1"},
		{"gopkg.in/inf.v0", "v0.9.1", "pkg:golang/gopkg.in/inf.v0@v0.9.1"},
		{"github.com/x/y", "v2.0.0+incompatible", "pkg:golang/github.com/x/y@v2.0.0%2Bincompatible"},
		{"github.com/x/y", "", "pkg:golang/github.com/x/y"},
		{"stdlib", "1.26.8", "pkg:golang/stdlib@1.26.8"},
	} {
		assert.Equal(t, tc.want, GoPURL(tc.path, tc.version))
	}
}

func TestParseModGraph(t *testing.T) {
	edges, err := ParseModGraph(strings.NewReader("example.com/m a.example@v1.0.0\na.example@v1.0.0 b.example@v0.1.0\n\n"))
	require.NoError(t, err)
	assert.Equal(t, []Edge{{"example.com/m", "a.example@v1.0.0"}, {"a.example@v1.0.0", "b.example@v0.1.0"}}, edges)
	_, err = ParseModGraph(strings.NewReader("a b c\n"))
	assert.EqualError(t, err, `go mod graph: unexpected line "a b c"`)
}

// manyModules is the build information of a binary of this module that links many modules:
// hack/release (helm's chart packages, go-containerregistry, the Kubernetes libraries). A
// test binary's own build information lists no modules.
var manyModules = sync.OnceValues(func() (*debug.BuildInfo, error) {
	dir, err := os.MkdirTemp("", "release-sbom-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "release")
	cmd := exec.Command("go", "build", "-o", bin, "./hack/release")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./hack/release: %w\n%s", err, out)
	}
	return buildinfo.ReadFile(bin)
})

func buildInfo(t *testing.T) *debug.BuildInfo {
	t.Helper()
	if testing.Short() {
		t.Skip("builds hack/release")
	}
	info, err := manyModules()
	require.NoError(t, err)
	require.Greater(t, len(info.Deps), 50)
	return info
}

// TestSBOMListsTheModuleGraph makes the SBOM of hack/release's binary (its build
// information holds what it links) against the repository's real module graph: every linked module is
// a component at the version the module graph selects (`go list -m all`), with its purl;
// the main component depends on the direct requirements it links; every other edge is a
// requirement `go mod graph` lists; the same input makes the same document.
func TestSBOMListsTheModuleGraph(t *testing.T) {
	info := buildInfo(t)
	mods, err := ReadGoModules(root)
	require.NoError(t, err)
	graph, err := ReadModGraph(root)
	require.NoError(t, err)
	in := SBOMInput{Version: "v1.2.3", Infos: []*debug.BuildInfo{info}, Modules: mods, Graph: graph}
	data, err := SBOM(in)
	require.NoError(t, err)
	again, err := SBOM(in)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "deterministic")

	bom, errs := CheckBOM(data)
	require.Empty(t, errs)
	assert.Empty(t, CheckBOMLists(bom, []*debug.BuildInfo{info}))

	selected := map[string]string{}
	direct := map[string]bool{}
	for _, m := range mods {
		selected[m.Path] = m.Version
		direct[m.Path] = !m.Main && !m.Indirect
	}
	byRef := map[string]Component{}
	for _, c := range bom.Components {
		byRef[c.BOMRef] = c
	}
	require.Len(t, bom.Components, len(info.Deps)+1, "one per linked module, and the standard library")
	for _, d := range info.Deps {
		c, ok := byRef[GoPURL(d.Path, d.Version)]
		if assert.True(t, ok, "%s@%s", d.Path, d.Version) {
			assert.Equal(t, selected[d.Path], c.Version, "%s: the module graph's version", d.Path)
			assert.Equal(t, "pkg:golang/"+d.Path+"@"+selected[d.Path], c.PURL)
		}
	}
	edges := map[string]bool{}
	for _, e := range graph {
		to, _, _ := strings.Cut(e.To, "@")
		edges[e.From+" "+to] = true
	}
	root := bom.Metadata.Component
	assert.Equal(t, "github.com/policyattachment/webhook", root.Name)
	assert.Equal(t, "pkg:golang/github.com/policyattachment/webhook@v1.2.3", root.PURL)
	for _, d := range bom.Dependencies {
		if d.Ref == root.BOMRef {
			assert.Contains(t, d.DependsOn, GoPURL("github.com/google/go-containerregistry", selected["github.com/google/go-containerregistry"]))
			for _, to := range d.DependsOn {
				if c := byRef[to]; c.Name != "stdlib" && !direct[c.Name] {
					// A module no linked module's requirements reach: go.mod requires it.
					assert.True(t, edges["github.com/policyattachment/webhook "+c.Name], "%s: go.mod requires it", c.Name)
				}
			}
			continue
		}
		from := byRef[d.Ref]
		for _, to := range d.DependsOn {
			assert.True(t, edges[from.Name+"@"+from.Version+" "+byRef[to].Name], "%s -> %s is no requirement of the module graph", d.Ref, to)
		}
	}
	helm := GoPURL("helm.sh/helm/v3", selected["helm.sh/helm/v3"])
	i := slices.IndexFunc(bom.Dependencies, func(d Dependency) bool { return d.Ref == helm })
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, bom.Dependencies[i].DependsOn, GoPURL("github.com/Masterminds/semver/v3", selected["github.com/Masterminds/semver/v3"]), "helm requires semver")
}

// TestCheckBOMFindsProblems: each broken document is refused with what is wrong.
func TestCheckBOMFindsProblems(t *testing.T) {
	info := buildInfo(t)
	good, err := SBOM(SBOMInput{Version: "v1.2.3", Infos: []*debug.BuildInfo{info}})
	require.NoError(t, err)
	mutate := func(f func(b map[string]any)) []byte {
		var b map[string]any
		require.NoError(t, json.Unmarshal(good, &b))
		f(b)
		data, err := json.Marshal(b)
		require.NoError(t, err)
		return data
	}
	component := func(b map[string]any, i int) map[string]any { return b["components"].([]any)[i].(map[string]any) }
	first := func() Component {
		bom, errs := CheckBOM(good)
		require.Empty(t, errs)
		return bom.Components[0]
	}()
	for label, tc := range map[string]struct {
		data []byte
		want []string
	}{
		"an unknown field": {
			data: mutate(func(b map[string]any) { b["licences"] = []any{} }),
			want: []string{`SBOM: json: unknown field "licences"`},
		},
		"another spec version": {
			data: mutate(func(b map[string]any) { b["specVersion"] = "1.4" }),
			want: []string{`SBOM: bomFormat "CycloneDX" specVersion "1.4" version 1, want CycloneDX 1.6 and at least 1`},
		},
		"a purl naming another version": {
			data: mutate(func(b map[string]any) { component(b, 0)["version"] = "v0.0.1" }),
			want: []string{`SBOM: components[0] (` + first.Name + `): purl "` + first.PURL + `", want "` + GoPURL(first.Name, "v0.0.1") + `"`},
		},
		"a dependency on nothing": {
			data: mutate(func(b map[string]any) {
				d := b["dependencies"].([]any)[0].(map[string]any)
				d["dependsOn"] = append(d["dependsOn"].([]any), "pkg:golang/nowhere@v1")
			}),
			want: []string{`SBOM: dependencies[0] (pkg:golang/github.com/policyattachment/webhook@v1.2.3) depends on "pkg:golang/nowhere@v1", which names no component`},
		},
		"a component nothing reaches": {
			data: mutate(func(b map[string]any) {
				for _, d := range b["dependencies"].([]any) {
					d := d.(map[string]any)
					var keep []any
					for _, to := range d["dependsOn"].([]any) {
						if to != first.BOMRef {
							keep = append(keep, to)
						}
					}
					d["dependsOn"] = append([]any{}, keep...)
				}
			}),
			want: []string{"SBOM: " + first.BOMRef + " is not reached from pkg:golang/github.com/policyattachment/webhook@v1.2.3"},
		},
	} {
		t.Run(label, func(t *testing.T) {
			_, errs := CheckBOM(tc.data)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}

	bom, errs := CheckBOM(good)
	require.Empty(t, errs)
	bom.Components = slices.DeleteFunc(bom.Components, func(c Component) bool { return c.Name == first.Name })
	assert.Equal(t, []string{"SBOM: " + first.Name + "@" + first.Version + " is linked into the binary and not listed"},
		errorStrings(CheckBOMLists(bom, []*debug.BuildInfo{info})))
}

// TestChecksums: SHA256SUMS is what `sha256sum -c` reads, and VerifyChecksums refuses a
// changed file and a file it does not list.
func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, WriteChecksums(dir))
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	require.NoError(t, err)
	assert.Equal(t, "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7  a.txt\n"+
		"0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f  b.txt\n", string(sums))
	require.NoError(t, VerifyChecksums(dir))
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "--strict", ChecksumsFile)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "a.txt: OK\nb.txt: OK\n", string(out))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("B\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.txt"), nil, 0o644))
	assert.EqualError(t, VerifyChecksums(dir), "SHA256SUMS: b.txt: sha256 "+
		"c0cde77fa8fef97d476c10aad3d2d54fcc2f336140d073651c2dcccf1e379fd6"+", SHA256SUMS says 0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f; c.txt is not in SHA256SUMS")
}

func errorStrings(errs []error) []string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}

// TestFullName: the name index.json gives the image is the reference in full, as containerd
// stores what it pulls: registry, repository (a one-part name under library/) and tag.
func TestFullName(t *testing.T) {
	for ref, want := range map[string]string{
		"registry.example/policyattachment/webhook:v1.2.3": "registry.example/policyattachment/webhook:v1.2.3",
		"localhost:5000/webhook:v1.2.3":                    "localhost:5000/webhook:v1.2.3",
	} {
		tag, err := name.NewTag(ref)
		require.NoError(t, err)
		assert.Equal(t, want, FullName(tag))
	}
	tag, err := name.NewTag("webhook:v1.2.3")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimPrefix(name.DefaultRegistry, "index.")+"/library/webhook:v1.2.3", FullName(tag))
	assert.NotContains(t, FullName(tag), "index.")
}
