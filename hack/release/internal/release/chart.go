package release

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ChartName is the chart's name (deploy/chart/Chart.yaml), and so its package's prefix.
const ChartName = "policyattachment-webhook"

// ChartFile is the name `helm package` gives the chart at version (a release version).
func ChartFile(version string) string { return ChartName + "-" + ChartVersion(version) + ".tgz" }

// PackageChart packages the chart in chartDir into outDir with helm, as
// `helm package --version X.Y.Z --app-version vX.Y.Z` (the chart's version without the "v",
// its appVersion, and so its default image tag, the release version), and returns the
// package's path.
func PackageChart(helm, chartDir, version, outDir string) (string, error) {
	if _, err := run(helm, "package", chartDir, "--version", ChartVersion(version), "--app-version", version, "--destination", outDir); err != nil {
		return "", err
	}
	return filepath.Join(outDir, ChartFile(version)), nil
}

// IndexCharts writes dir/index.yaml for the chart packages in dir, as `helm repo index`
// does: their URLs relative to the index, or under url when given.
func IndexCharts(helm, dir, url string) error {
	args := []string{"repo", "index", dir}
	if url != "" {
		args = append(args, "--url", url)
	}
	_, err := run(helm, args...)
	return err
}

func run(name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
