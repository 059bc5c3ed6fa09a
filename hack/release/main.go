// Command release writes a release to dist/ (`make release VERSION=vX.Y.Z`) or checks one
// (`make release-verify VERSION=vX.Y.Z`); docs/releasing.md says what a release holds.
//
//	go run ./hack/release -version v1.2.3 [-o dist] [-repository policyattachment/webhook] [-chart-url URL]
//	go run ./hack/release verify -version v1.2.3 [-dir dist] [-repository policyattachment/webhook]
//
// Run from the repository's root. The image's repository defaults to the chart's
// image.repository (deploy/chart/values.yaml), so the chart's default image is the one in
// the archive. helm is hack/release/helm.sh's (built from its module once per machine).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/hack/release/internal/release"
)

const chartDir = "deploy/chart"

func main() {
	verify := len(os.Args) > 1 && os.Args[1] == "verify"
	args := os.Args[1:]
	if verify {
		args = args[1:]
	}
	fs := flag.NewFlagSet("release", flag.ExitOnError)
	version := fs.String("version", "", "the release version, vMAJOR.MINOR.PATCH[-PRERELEASE]")
	repository := fs.String("repository", "", "the image's repository (default: the chart's image.repository)")
	out := fs.String("o", "dist", "the folder to write (emptied first)")
	dir := fs.String("dir", "dist", "verify: the release folder to check")
	chartURL := fs.String("chart-url", "", "the chart repository's URL written into index.yaml (default: URLs relative to index.yaml)")
	helm := fs.String("helm", "", "the helm binary (default: hack/release/helm.sh's)")
	_ = fs.Parse(args)
	if *version == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: release -version vX.Y.Z [-o dist] | release verify -version vX.Y.Z [-dir dist]")
		os.Exit(2)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fail(fmt.Errorf("run from the repository's root: %w", err))
	}
	if *repository == "" {
		r, err := chartRepository()
		if err != nil {
			fail(err)
		}
		*repository = r
	}
	if verify {
		errs := release.Verify(*dir, *version, *repository)
		for _, err := range errs {
			fmt.Fprintln(os.Stderr, "  "+err.Error())
		}
		if len(errs) > 0 {
			fail(fmt.Errorf("%s: %d problems", *dir, len(errs)))
		}
		fmt.Printf("%s: the release %s checks out (%s)\n", *dir, *version, strings.Join(release.Files(*version), ", "))
		printRuns(*version)
		return
	}

	if err := release.CheckVersion(*version); err != nil {
		fail(fmt.Errorf("%w: say which, e.g. make release VERSION=v1.2.3", err))
	}
	if abs, _ := filepath.Abs(*out); abs == "" || isSource(abs) {
		fail(fmt.Errorf("-o %s: refusing to empty a folder that holds the sources", *out))
	}
	if *helm == "" {
		h, err := exec.Command("bash", "hack/release/helm.sh").Output()
		if err != nil {
			fail(fmt.Errorf("hack/release/helm.sh: %w", err))
		}
		*helm = strings.TrimSpace(string(h))
	}
	start := time.Now()
	err := release.Run(release.Options{
		Root: ".", Package: "./cmd/webhook", Version: *version, Repository: *repository,
		ChartDir: chartDir, ChartURL: *chartURL, Changelog: "CHANGELOG.md", Helm: *helm,
		Out: *out, Work: filepath.Join("bin", "release"), Log: os.Stdout,
	})
	if err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s/ in %.0fs:\n", *out, time.Since(start).Seconds())
	for _, f := range release.Files(*version) {
		if st, err := os.Stat(filepath.Join(*out, f)); err == nil {
			fmt.Printf("  %10d  %s\n", st.Size(), f)
		}
	}
	printRuns(*version)
	fmt.Printf("check it: (cd %s && sha256sum -c %s); make release-verify VERSION=%s\n", *out, release.ChecksumsFile, *version)
}

// printRuns says which binaries the verification ran.
func printRuns(version string) {
	for _, arch := range release.Architectures {
		if run, ok := release.Runner(arch); !ok {
			fmt.Printf("  linux/%s: its binary checked by its ELF header and build information; not run here (Debian's qemu-user-static runs it)\n", arch)
		} else if len(run) > 0 {
			fmt.Printf("  linux/%s: its binary ran under %s and reported %s\n", arch, filepath.Base(run[0]), version)
		} else {
			fmt.Printf("  linux/%s: its binary ran and reported %s\n", arch, version)
		}
	}
}

// chartRepository is the chart's default image repository.
func chartRepository() (string, error) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	var values struct {
		Image struct{ Repository string } `json:"image"`
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return "", fmt.Errorf("%s/values.yaml: %w", chartDir, err)
	}
	if values.Image.Repository == "" {
		return "", fmt.Errorf("%s/values.yaml has no image.repository", chartDir)
	}
	return values.Image.Repository, nil
}

// isSource tells whether dir is or holds the repository (a go.mod or .git in it or above
// it up to the working directory).
func isSource(dir string) bool {
	wd, _ := os.Getwd()
	for _, marker := range []string{"go.mod", ".git"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return true
		}
	}
	rel, err := filepath.Rel(dir, wd)
	return err == nil && !strings.HasPrefix(rel, "..") // dir is the working directory or above it
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}
