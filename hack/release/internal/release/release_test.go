package release

import (
	"archive/tar"
	"compress/gzip"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// root is the repository's root, from this package's folder.
const root = "../../../.."

const (
	testVersion    = "v0.0.0-test"
	testRepository = "example.test/policyattachment/webhook"
	tinyPackage    = "./hack/release/internal/release/testdata/tiny"
)

// tiny builds testdata/tiny for each architecture once per test binary, stamped with
// testVersion, as the release builds the webhook.
var tiny = sync.OnceValues(func() ([]Binary, error) {
	dir, err := os.MkdirTemp("", "release-tiny-")
	if err != nil {
		return nil, err
	}
	var bins []Binary
	for _, arch := range Architectures {
		b := Binary{Arch: arch, Path: filepath.Join(dir, "tiny-"+arch)}
		if err := BuildBinary(root, tinyPackage, arch, testVersion, b.Path); err != nil {
			return nil, err
		}
		bins = append(bins, b)
	}
	return bins, nil
})

func tinyBinaries(t *testing.T) []Binary {
	t.Helper()
	if testing.Short() {
		t.Skip("cross-compiles")
	}
	bins, err := tiny()
	require.NoError(t, err)
	return bins
}

// helmBinary is hack/release/helm.sh's helm (built from its module once per machine).
func helmBinary(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", "hack/release/helm.sh")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "hack/release/helm.sh")
	return strings.TrimSpace(string(out))
}

func requireGit(t *testing.T) {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	if err := cmd.Run(); err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
}

const testChangelog = `# Changelog

All notable changes to this project are written here.

## [Unreleased]

### Added
- Something on its way.

## [0.2.0] - 2026-12-01

### Fixed
- A bug.

## [v0.1.0] - 2026-11-27

### Added
- The first release.

[Unreleased]: https://github.com/policyattachment/webhook/compare/v0.2.0...HEAD
[0.2.0]: https://github.com/policyattachment/webhook/releases/tag/v0.2.0
`

// TestRelease runs the whole release, as `make release` does, on a small stand-in for the
// webhook, then checks what it wrote: Verify finds nothing; the index holds linux/amd64 and
// linux/arm64 in that order, each image's binary is an ELF of its architecture (the arm64
// one read with debug/elf) and the amd64 one runs and reports the version; `sha256sum -c`
// accepts SHA256SUMS; the chart package's Chart.yaml has the version; the SBOM lists the
// module the binary links; the release notes are the Unreleased section.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles and packages the chart")
	}
	requireGit(t)
	dir := t.TempDir()
	changelog := filepath.Join(dir, "CHANGELOG.md")
	require.NoError(t, os.WriteFile(changelog, []byte(testChangelog), 0o644))
	out := filepath.Join(dir, "dist")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "stale.txt"), []byte("from an earlier release"), 0o644))
	var log strings.Builder
	err := Run(Options{
		Root: root, Package: tinyPackage, Version: testVersion, Repository: testRepository,
		ChartDir: filepath.Join(root, "deploy", "chart"), Changelog: changelog, Helm: helmBinary(t),
		Out: out, Work: filepath.Join(dir, "work"), Log: &log,
	})
	require.NoError(t, err, log.String())
	assert.Contains(t, log.String(), "CHANGELOG.md's [Unreleased] section")

	assert.Empty(t, Verify(out, testVersion, testRepository))
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{
		"RELEASE-NOTES.md", "SHA256SUMS", "index.yaml", "policyattachment-webhook-0.0.0-test.tgz",
		"webhook-v0.0.0-test-image.tar", "webhook-v0.0.0-test.cdx.json",
	}, names, "the earlier release's file is gone")

	t.Run("image index", func(t *testing.T) {
		a, err := ReadArchive(filepath.Join(out, ImageFile(testVersion)), t.TempDir())
		require.NoError(t, err)
		assert.Equal(t, "example.test/policyattachment/webhook:v0.0.0-test", a.Name)
		assert.Equal(t, testVersion, a.RefName)
		platforms, err := Platforms(a.Index)
		require.NoError(t, err)
		require.Len(t, platforms, 2)
		for i, want := range []struct {
			arch    string
			machine elf.Machine
		}{{"amd64", elf.EM_X86_64}, {"arm64", elf.EM_AARCH64}} {
			p := platforms[i]
			assert.Equal(t, "linux", p.Platform.OS)
			assert.Equal(t, want.arch, p.Platform.Architecture)
			assert.Equal(t, want.arch, p.Config.Architecture)
			assert.Equal(t, []string{"/webhook"}, p.Config.Config.Entrypoint)
			assert.Equal(t, "65532:65532", p.Config.Config.User)
			assert.Equal(t, testVersion, p.Config.Config.Labels["org.opencontainers.image.version"])
			bin := filepath.Join(t.TempDir(), "webhook")
			require.NoError(t, ExtractBinary(p.Image, bin))
			f, err := elf.Open(bin)
			require.NoError(t, err)
			assert.Equal(t, want.machine, f.Machine, want.arch)
			assert.Equal(t, elf.ELFCLASS64, f.Class)
			f.Close()
			// This machine's own binary runs; the other runs where qemu-user is installed.
			if run, ok := Runner(want.arch); ok {
				cmd := append(run, bin, "version")
				got, err := exec.Command(cmd[0], cmd[1:]...).Output()
				require.NoError(t, err)
				assert.Equal(t, "webhook v0.0.0-test\n", string(got), want.arch)
			} else {
				assert.NotEqual(t, runtime.GOARCH, want.arch)
			}
		}
		require.Len(t, a.Docker, 2)
		for _, e := range a.Docker {
			assert.Equal(t, []string{"example.test/policyattachment/webhook:v0.0.0-test"}, e.RepoTags)
		}
	})

	t.Run("sha256sum -c", func(t *testing.T) {
		if _, err := exec.LookPath("sha256sum"); err != nil {
			t.Skip("no sha256sum")
		}
		cmd := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
		cmd.Dir = out
		got, err := cmd.CombinedOutput()
		require.NoError(t, err, string(got))
		assert.Equal(t, 5, strings.Count(string(got), ": OK\n"), string(got))
	})

	t.Run("chart", func(t *testing.T) {
		chart := chartYAML(t, filepath.Join(out, "policyattachment-webhook-0.0.0-test.tgz"))
		assert.Equal(t, "policyattachment-webhook", chart["name"])
		assert.Equal(t, "0.0.0-test", chart["version"])
		assert.Equal(t, "v0.0.0-test", chart["appVersion"])
		index, err := os.ReadFile(filepath.Join(out, "index.yaml"))
		require.NoError(t, err)
		assert.Contains(t, string(index), "\n    - policyattachment-webhook-0.0.0-test.tgz\n", "a URL relative to index.yaml")
	})

	t.Run("SBOM", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(out, SBOMFile(testVersion)))
		require.NoError(t, err)
		bom, errs := CheckBOM(data)
		require.Empty(t, errs)
		assert.Equal(t, "pkg:golang/github.com/policyattachment/webhook@v0.0.0-test", bom.Metadata.Component.PURL)
		var names []string
		for _, c := range bom.Components {
			names = append(names, c.Name+" "+c.Version+" "+c.PURL)
		}
		assert.Equal(t, []string{
			"github.com/spf13/pflag v1.0.10 pkg:golang/github.com/spf13/pflag@v1.0.10",
			"stdlib " + runtime.Version() + " pkg:golang/stdlib@" + strings.TrimPrefix(runtime.Version(), "go"),
		}, names)
	})

	t.Run("release notes", func(t *testing.T) {
		notes, err := os.ReadFile(filepath.Join(out, NotesFile))
		require.NoError(t, err)
		assert.Equal(t, "## [Unreleased]\n\n### Added\n- Something on its way.\n", string(notes))
	})
}

// TestRunChecksBeforeBuilding: a version that is no release version, or a release without
// its CHANGELOG.md section, is refused before anything is built or dist/ is touched.
func TestRunChecksBeforeBuilding(t *testing.T) {
	dir := t.TempDir()
	changelog := filepath.Join(dir, "CHANGELOG.md")
	require.NoError(t, os.WriteFile(changelog, []byte(testChangelog), 0o644))
	out := filepath.Join(dir, "dist")
	require.NoError(t, os.MkdirAll(out, 0o755))
	keep := filepath.Join(out, "keep.txt")
	require.NoError(t, os.WriteFile(keep, nil, 0o644))
	for version, want := range map[string]string{
		"v0.3.0":     `CHANGELOG.md has no section "## [0.3.0] - YYYY-MM-DD": write what v0.3.0 changes there first (docs/releasing.md)`,
		"0.3.0":      `version "0.3.0" is not vMAJOR.MINOR.PATCH[-PRERELEASE] (did you mean v0.3.0?)`,
		"a0e96fe":    `version "a0e96fe" is not vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"v0.3.0+abc": `version "v0.3.0+abc" is not vMAJOR.MINOR.PATCH[-PRERELEASE] (no build metadata: the version is also the image tag, which cannot hold "+")`,
	} {
		err := Run(Options{Root: root, Package: tinyPackage, Version: version, Repository: testRepository, Changelog: changelog,
			Out: out, Work: filepath.Join(dir, "work"), Log: io.Discard})
		if assert.Error(t, err, version) {
			assert.Equal(t, want, err.Error())
		}
	}
	assert.FileExists(t, keep)
	assert.NoDirExists(t, filepath.Join(dir, "work"))
}

// TestVerifyFindsAWrongArchitecture: an index whose arm64 entry holds an amd64 binary is
// refused by its ELF header, and one missing arm64 by its platforms.
func TestVerifyFindsAWrongArchitecture(t *testing.T) {
	bins := tinyBinaries(t)
	meta := ImageMeta{Version: testVersion}
	tag, err := name.NewTag(testRepository + ":" + testVersion)
	require.NoError(t, err)
	for label, tc := range map[string]struct {
		bins []Binary
		want []string
	}{
		"amd64 binary as arm64": {
			bins: []Binary{bins[0], {Arch: "arm64", Path: bins[0].Path}},
			want: []string{
				"webhook-v0.0.0-test-image.tar: linux/arm64: ELF EM_X86_64 ELFCLASS64 ELFDATA2LSB ET_EXEC, want EM_AARCH64 ELFCLASS64 ELFDATA2LSB ET_EXEC",
				"webhook-v0.0.0-test-image.tar: linux/arm64: built for GOOS=linux GOARCH=amd64 CGO_ENABLED=0",
			},
		},
		"amd64 only": {
			bins: bins[:1],
			want: []string{"webhook-v0.0.0-test-image.tar: the index holds [linux/amd64], want [linux/amd64 linux/arm64]"},
		},
	} {
		t.Run(label, func(t *testing.T) {
			dir := t.TempDir()
			idx, err := Index(tc.bins, meta)
			require.NoError(t, err)
			file := filepath.Join(dir, ImageFile(testVersion))
			require.NoError(t, writeFile(file, func(w io.Writer) error { return WriteArchive(w, idx, tag) }))
			_, errs := verifyImage(file, filepath.Join(dir, "x"), testVersion, testRepository)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestArchiveIsReproducible: the same binaries and metadata make the same bytes.
func TestArchiveIsReproducible(t *testing.T) {
	bins := tinyBinaries(t)
	tag, err := name.NewTag(testRepository + ":" + testVersion)
	require.NoError(t, err)
	var sums []string
	for range 2 {
		idx, err := Index(bins, ImageMeta{Version: testVersion, Revision: "0123456789abcdef"})
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), "image.tar")
		require.NoError(t, writeFile(file, func(w io.Writer) error { return WriteArchive(w, idx, tag) }))
		sum, err := fileSHA256(file)
		require.NoError(t, err)
		sums = append(sums, sum)
	}
	assert.Equal(t, sums[0], sums[1])
}

// TestImageAsImagetarMakesIt: the release's amd64 image is `make image-tar`'s image (the
// same layer, entrypoint, user and labels), only with OCI media types, a commit time and
// a revision.
func TestImageAsImagetarMakesIt(t *testing.T) {
	bins := tinyBinaries(t)
	file := filepath.Join(t.TempDir(), "imagetar.tar")
	cmd := exec.Command("go", "run", "./hack/release/imagetar", "-binary", bins[0].Path, "-image", testRepository+":"+testVersion, "-version", testVersion, "-o", file)
	cmd.Dir = root
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, string(msg))
	theirs := readDockerArchive(t, file)
	ours, err := Image(bins[0], ImageMeta{Version: testVersion})
	require.NoError(t, err)
	ourCfg, err := ours.ConfigFile()
	require.NoError(t, err)
	theirCfg, err := theirs.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, theirCfg.RootFS.DiffIDs, ourCfg.RootFS.DiffIDs, "the same layer content")
	assert.Equal(t, theirCfg.Config, ourCfg.Config)
	assert.Equal(t, theirCfg.OS+"/"+theirCfg.Architecture, ourCfg.OS+"/"+ourCfg.Architecture)
}

// chartYAML reads Chart.yaml from a chart package.
func chartYAML(t *testing.T, file string) map[string]any {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		require.NoError(t, err, "no Chart.yaml in %s", file)
		if hdr.Name == ChartName+"/Chart.yaml" {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			var chart map[string]any
			require.NoError(t, yaml.Unmarshal(data, &chart))
			return chart
		}
	}
}

// readDockerArchive reads the one image of a docker-archive tarball.
func readDockerArchive(t *testing.T, file string) v1.Image {
	t.Helper()
	img, err := tarball.ImageFromPath(file, nil)
	require.NoError(t, err)
	return img
}
