package release

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// Options say what Run builds, from where, and into where.
type Options struct {
	Root       string // the module's root: go list, go mod graph and git run there
	Package    string // the main package, ./cmd/webhook
	Version    string // vX.Y.Z[-PRERELEASE]
	Repository string // the image's repository; the tag is Version
	ChartDir   string // deploy/chart
	ChartURL   string // the chart repository's URL for index.yaml; empty: relative
	Changelog  string // CHANGELOG.md
	Helm       string // the helm binary (hack/release/helm.sh)
	Out        string // dist: emptied first
	Work       string // where the binaries are built (bin/release)
	Log        io.Writer
}

// Run writes the release of o.Version to o.Out: it checks the version and the changelog
// before building anything, cross-compiles one binary per architecture, then writes the
// image archive, the chart package and its index, the SBOM, the release notes and
// SHA256SUMS, and verifies the result (Verify).
func Run(o Options) error {
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, format+"\n", args...) }
	if err := CheckVersion(o.Version); err != nil {
		return err
	}
	changelog, err := os.ReadFile(o.Changelog)
	if err != nil {
		return err
	}
	notes, unreleased, err := ChangelogSection(string(changelog), o.Version)
	if err != nil {
		return err
	}
	if unreleased {
		logf("release notes: %s is a pre-release without a section of its own: CHANGELOG.md's [Unreleased] section", o.Version)
	}
	tag, err := name.NewTag(o.Repository + ":" + o.Version)
	if err != nil {
		return fmt.Errorf("image %s:%s: %w", o.Repository, o.Version, err)
	}
	vcs, err := ReadVCS(o.Root)
	if err != nil {
		return err
	}
	if vcs.Modified {
		logf("warning: tracked files differ from commit %.12s; the SBOM says vcs.modified=true", vcs.Revision)
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return err
	}

	step := func(what string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		logf("%-44s %5.1fs", what, time.Since(start).Seconds())
		return nil
	}
	var (
		bins  []Binary
		infos []*debug.BuildInfo
	)
	for _, arch := range Architectures {
		b := Binary{Arch: arch, Path: filepath.Join(o.Work, "webhook-linux-"+arch)}
		if err := step("go build linux/"+arch, func() error { return BuildBinary(o.Root, o.Package, arch, o.Version, b.Path) }); err != nil {
			return err
		}
		info, err := buildinfo.ReadFile(b.Path)
		if err != nil {
			return err
		}
		bins, infos = append(bins, b), append(infos, info)
	}
	meta := ImageMeta{Version: o.Version, Revision: vcs.Revision, Created: vcs.Time}
	if err := step("image index "+ImageFile(o.Version), func() error {
		idx, err := Index(bins, meta)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(o.Out, ImageFile(o.Version)), func(w io.Writer) error { return WriteArchive(w, idx, tag) })
	}); err != nil {
		return err
	}
	if err := step("helm package, helm repo index", func() error {
		if _, err := PackageChart(o.Helm, o.ChartDir, o.Version, o.Out); err != nil {
			return err
		}
		return IndexCharts(o.Helm, o.Out, o.ChartURL)
	}); err != nil {
		return err
	}
	if err := step("SBOM "+SBOMFile(o.Version), func() error {
		mods, err := ReadGoModules(o.Root)
		if err != nil {
			return err
		}
		graph, err := ReadModGraph(o.Root)
		if err != nil {
			return err
		}
		data, err := SBOM(SBOMInput{Version: o.Version, Infos: infos, Modules: mods, Graph: graph, VCS: &vcs})
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(o.Out, SBOMFile(o.Version)), data, 0o644)
	}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Out, NotesFile), []byte(notes), 0o644); err != nil {
		return err
	}
	if err := WriteChecksums(o.Out); err != nil {
		return err
	}
	return step("verify", func() error {
		if errs := Verify(o.Out, o.Version, o.Repository); len(errs) > 0 {
			for _, e := range errs {
				logf("  %v", e)
			}
			return fmt.Errorf("%d problems", len(errs))
		}
		return nil
	})
}

// writeFile writes file through write, by way of a temporary file beside it.
func writeFile(file string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-"+filepath.Base(file))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
