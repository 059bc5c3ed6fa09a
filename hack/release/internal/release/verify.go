package release

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/test/harness/deployrender"
)

// The files of a release in dist/, besides ChecksumsFile and the chart's package.
const (
	IndexFile = "index.yaml"
	NotesFile = "RELEASE-NOTES.md"
)

// ImageFile is the image archive's name in dist/.
func ImageFile(version string) string { return "webhook-" + version + "-image.tar" }

// SBOMFile is the SBOM's name in dist/.
func SBOMFile(version string) string { return "webhook-" + version + ".cdx.json" }

// Files lists what a release of version holds in dist/, in name order.
func Files(version string) []string {
	f := []string{ChecksumsFile, ChartFile(version), ImageFile(version), IndexFile, NotesFile, SBOMFile(version)}
	sort.Strings(f)
	return f
}

// Verify checks the release of version in dir, as CI does after `make release`, and
// returns every problem it finds:
//
//   - SHA256SUMS vouches for every file, and the files are those of Files;
//   - the image archive is an OCI layout naming repository:version, holding an index of
//     linux/amd64 and linux/arm64 in that order; each image holds one static ELF binary of
//     its architecture (debug/elf) at /webhook, built for it with the version stamped (its
//     build information), run as the Dockerfile's user; the binary of this machine's
//     architecture is run and reports the version; manifest.json lists both, amd64 last;
//   - the chart package has the version (without "v") and appVersion, and `helm lint`
//     finds nothing above INFO; index.yaml lists it with its digest;
//   - the SBOM is CycloneDX 1.6 (CheckBOM) and lists every module linked into the binaries
//     at the version they were built with, with its purl.
func Verify(dir, version, repository string) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := CheckVersion(version); err != nil {
		return []error{err}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []error{err}
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(got)
	if want := Files(version); strings.Join(got, " ") != strings.Join(want, " ") {
		fail("%s holds %v, want %v", dir, got, want)
	}
	if err := VerifyChecksums(dir); err != nil {
		errs = append(errs, err)
	}

	tmp, err := os.MkdirTemp("", "release-verify-")
	if err != nil {
		return append(errs, err)
	}
	defer os.RemoveAll(tmp)
	infos, imgErrs := verifyImage(filepath.Join(dir, ImageFile(version)), filepath.Join(tmp, "image"), version, repository)
	errs = append(errs, imgErrs...)
	errs = append(errs, verifyChart(dir, version, filepath.Join(tmp, "chart"))...)
	errs = append(errs, verifySBOM(filepath.Join(dir, SBOMFile(version)), version, infos)...)
	if notes, err := os.ReadFile(filepath.Join(dir, NotesFile)); err != nil {
		errs = append(errs, err)
	} else if !changelogHeading.Match(notes) {
		fail("%s does not open with a CHANGELOG.md section heading", NotesFile)
	}
	return errs
}

// verifyImage checks the image archive and returns the build information of its binaries.
func verifyImage(file, dir, version, repository string) ([]*debug.BuildInfo, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{filepath.Base(file)}, args...)...))
	}
	tag, err := name.NewTag(repository + ":" + version)
	if err != nil {
		return nil, []error{err}
	}
	a, err := ReadArchive(file, dir)
	if err != nil {
		return nil, []error{err}
	}
	if a.Name != FullName(tag) || a.RefName != version {
		fail("index.json names %q (ref %q), want %q (ref %q)", a.Name, a.RefName, FullName(tag), version)
	}
	platforms, err := Platforms(a.Index)
	if err != nil {
		return nil, append(errs, err)
	}
	var archs []string
	for _, p := range platforms {
		archs = append(archs, p.Platform.OS+"/"+p.Platform.Architecture)
	}
	if strings.Join(archs, " ") != "linux/amd64 linux/arm64" {
		fail("the index holds %v, want [linux/amd64 linux/arm64]", archs)
	}
	var infos []*debug.BuildInfo
	for _, p := range platforms {
		arch := p.Platform.Architecture
		pfail := func(format string, args ...any) { fail("linux/%s: "+format, append([]any{arch}, args...)...) }
		c := p.Config
		if c.OS != "linux" || c.Architecture != arch {
			pfail("config says %s/%s", c.OS, c.Architecture)
		}
		if strings.Join(c.Config.Entrypoint, " ") != entrypoint || c.Config.User != nonRoot {
			pfail("entrypoint %v, user %q; want [%s], %q", c.Config.Entrypoint, c.Config.User, entrypoint, nonRoot)
		}
		if v := c.Config.Labels["org.opencontainers.image.version"]; v != version {
			pfail("labelled version %q, want %q", v, version)
		}
		bin := filepath.Join(dir, "webhook-"+arch)
		if err := ExtractBinary(p.Image, bin); err != nil {
			pfail("%v", err)
			continue
		}
		elfErr := CheckELF(bin, arch)
		if elfErr != nil {
			pfail("%v", elfErr)
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			pfail("build information: %v", err)
			continue
		}
		infos = append(infos, info)
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if settings["GOOS"] != "linux" || settings["GOARCH"] != arch || settings["CGO_ENABLED"] != "0" {
			pfail("built for GOOS=%s GOARCH=%s CGO_ENABLED=%s", settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
		}
		// -trimpath leaves -ldflags out of the build information: the stamped version is
		// found as the string -X put in the binary, and read back where the binary runs.
		if data, err := os.ReadFile(bin); err != nil || !bytes.Contains(data, []byte(version)) {
			pfail("the version %s is not stamped into the binary (%v)", version, err)
		}
		if run, ok := Runner(arch); ok && elfErr == nil {
			cmd := append(run, bin, "version")
			out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
			if want := "webhook " + version + "\n"; err != nil || string(out) != want {
				pfail("`webhook version` printed %q (%v), want %q", out, err, want)
			}
		}
	}
	if len(a.Docker) != len(platforms) {
		fail("manifest.json lists %d images, the index %d", len(a.Docker), len(platforms))
	}
	for i, e := range a.Docker {
		if len(e.RepoTags) != 1 || e.RepoTags[0] != tag.String() {
			fail("manifest.json entry %d is tagged %v, want [%s]", i, e.RepoTags, tag)
		}
		for _, p := range append([]string{e.Config}, e.Layers...) {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				fail("manifest.json entry %d: %v", i, err)
			}
		}
		if i == len(a.Docker)-1 {
			var cfg struct{ Architecture string }
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Config)))
			if err == nil {
				err = json.Unmarshal(data, &cfg)
			}
			if err != nil || cfg.Architecture != "amd64" {
				fail("manifest.json's last entry is %q (%v), want amd64: a plain `docker load` tags it", cfg.Architecture, err)
			}
		}
	}
	return infos, errs
}

// Runner is how this machine runs a linux binary of GOARCH arch: directly for its own
// architecture, through qemu-user (Debian's qemu-user-static or qemu-user) for arm64 where
// that is installed: the command to put before the binary's path, and whether there is one.
func Runner(arch string) ([]string, bool) {
	if runtime.GOOS != "linux" {
		return nil, false
	}
	if arch == runtime.GOARCH {
		return nil, true
	}
	if arch == "arm64" {
		for _, q := range []string{"qemu-aarch64-static", "qemu-aarch64"} {
			if p, err := exec.LookPath(q); err == nil {
				return []string{p}, true
			}
		}
	}
	return nil, false
}

// CheckELF checks that file is a static 64-bit little-endian linux ELF executable for
// GOARCH arch.
func CheckELF(file, arch string) error {
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	f, err := elf.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Type != elf.ET_EXEC {
		return fmt.Errorf("ELF %s %s %s %s, want %s ELFCLASS64 ELFDATA2LSB ET_EXEC", f.Machine, f.Class, f.Data, f.Type, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("the binary is dynamically linked (%s): the image has no libc", p.Type)
		}
	}
	return nil
}

func verifyChart(dir, version, tmp string) []error {
	var errs []error
	file := filepath.Join(dir, ChartFile(version))
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{filepath.Base(file)}, args...)...))
	}
	ch, err := loader.Load(file)
	if err != nil {
		return []error{err}
	}
	if m := ch.Metadata; m.Name != ChartName || m.Version != ChartVersion(version) || m.AppVersion != version {
		fail("Chart.yaml has name %q, version %q, appVersion %q; want %q, %q, %q", m.Name, m.Version, m.AppVersion, ChartName, ChartVersion(version), version)
	}
	if err := chartutil.ExpandFile(tmp, file); err != nil {
		return append(errs, err)
	}
	kube, err := chartutil.ParseKubeVersion(deployrender.KubeVersion)
	if err != nil {
		return append(errs, err)
	}
	for _, msg := range lint.AllWithKubeVersion(filepath.Join(tmp, ChartName), nil, "policyattachment-system", kube).Messages {
		if msg.Severity > support.InfoSev {
			fail("helm lint: %s", msg)
		}
	}

	data, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		return append(errs, err)
	}
	var index struct {
		APIVersion string `json:"apiVersion"`
		Entries    map[string][]struct {
			Name, Version, AppVersion, Digest string
			URLs                              []string `json:"urls"`
			Created                           time.Time
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(data, &index); err != nil {
		return append(errs, fmt.Errorf("%s: %w", IndexFile, err))
	}
	sum, err := fileSHA256(file)
	if err != nil {
		return append(errs, err)
	}
	entries := index.Entries[ChartName]
	if index.APIVersion != "v1" || len(index.Entries) != 1 || len(entries) != 1 {
		return append(errs, fmt.Errorf("%s: apiVersion %q, entries %d (of %s: %d), want v1 and one chart version", IndexFile, index.APIVersion, len(index.Entries), ChartName, len(entries)))
	}
	e := entries[0]
	u, _ := url.Parse(strings.Join(e.URLs, ""))
	if e.Version != ChartVersion(version) || e.AppVersion != version || e.Digest != sum || len(e.URLs) != 1 || u == nil || filepath.Base(u.Path) != ChartFile(version) {
		errs = append(errs, fmt.Errorf("%s: %s version %q appVersion %q digest %s urls %v; want %q, %q, %s, [.../%s]",
			IndexFile, ChartName, e.Version, e.AppVersion, e.Digest, e.URLs, ChartVersion(version), version, sum, ChartFile(version)))
	}
	return errs
}

func verifySBOM(file, version string, infos []*debug.BuildInfo) []error {
	data, err := os.ReadFile(file)
	if err != nil {
		return []error{err}
	}
	bom, errs := CheckBOM(data)
	if bom == nil {
		return errs
	}
	if c := bom.Metadata.Component; c.Version != version {
		errs = append(errs, fmt.Errorf("%s: the main component's version is %q, want %q", filepath.Base(file), c.Version, version))
	}
	return append(errs, CheckBOMLists(bom, infos)...)
}

var (
	serialPattern = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// componentTypes is the closed set of CycloneDX 1.6's component.type.
	componentTypes = map[string]bool{"application": true, "framework": true, "library": true, "container": true, "platform": true,
		"operating-system": true, "device": true, "device-driver": true, "firmware": true, "file": true, "machine-learning-model": true,
		"data": true, "cryptographic-asset": true}
)

// CheckBOM decodes a CycloneDX SBOM as SBOM writes it (no field it does not know) and checks
// what the specification's 1.6 schema requires of it, and the graph: every component has a
// unique bom-ref and a pkg:golang purl naming its name and version, every reference in the
// dependencies resolves, every component is listed there once and is reached from the main
// component.
func CheckBOM(data []byte) (*BOM, []error) {
	var bom BOM
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&bom); err != nil {
		return nil, []error{fmt.Errorf("SBOM: %w", err)}
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("SBOM: "+format, args...)) }
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != SpecVersion || bom.Version < 1 {
		fail("bomFormat %q specVersion %q version %d, want CycloneDX %s and at least 1", bom.BOMFormat, bom.SpecVersion, bom.Version, SpecVersion)
	}
	if !serialPattern.MatchString(bom.SerialNumber) {
		fail("serialNumber %q is not a urn:uuid", bom.SerialNumber)
	}
	if _, err := time.Parse(time.RFC3339, bom.Metadata.Timestamp); err != nil {
		fail("metadata.timestamp: %v", err)
	}
	if len(bom.Metadata.Tools.Components) == 0 {
		fail("metadata.tools names no tool")
	}
	refs := map[string]bool{}
	checkComponent := func(where string, c Component) {
		if !componentTypes[c.Type] || c.Name == "" {
			fail("%s: type %q name %q", where, c.Type, c.Name)
		}
		if c.BOMRef == "" || refs[c.BOMRef] {
			fail("%s: bom-ref %q is empty or not unique", where, c.BOMRef)
		}
		refs[c.BOMRef] = true
		if c.Version == "" {
			fail("%s (%s): no version", where, c.Name)
		}
		if want := GoPURL(c.Name, c.Version); c.PURL != want && !(c.Name == "stdlib" && c.PURL == GoPURL("stdlib", strings.TrimPrefix(c.Version, "go"))) {
			fail("%s (%s): purl %q, want %q", where, c.Name, c.PURL, want)
		}
	}
	root := bom.Metadata.Component
	checkComponent("metadata.component", root)
	if root.Type != "application" {
		fail("metadata.component is a %s, want an application", root.Type)
	}
	for i, c := range bom.Components {
		checkComponent(fmt.Sprintf("components[%d]", i), c)
	}
	graph := map[string][]string{}
	for i, d := range bom.Dependencies {
		if !refs[d.Ref] {
			fail("dependencies[%d].ref %q names no component", i, d.Ref)
		}
		if _, dup := graph[d.Ref]; dup {
			fail("dependencies[%d].ref %q is listed twice", i, d.Ref)
		}
		graph[d.Ref] = d.DependsOn
		for _, to := range d.DependsOn {
			if !refs[to] {
				fail("dependencies[%d] (%s) depends on %q, which names no component", i, d.Ref, to)
			}
		}
	}
	reached := map[string]bool{}
	var walk func(string)
	walk = func(ref string) {
		if reached[ref] {
			return
		}
		reached[ref] = true
		for _, to := range graph[ref] {
			walk(to)
		}
	}
	walk(root.BOMRef)
	for _, c := range append([]Component{root}, bom.Components...) {
		if _, ok := graph[c.BOMRef]; !ok {
			fail("%s is not in dependencies", c.BOMRef)
		}
		if !reached[c.BOMRef] {
			fail("%s is not reached from %s", c.BOMRef, root.BOMRef)
		}
	}
	return &bom, errs
}

// CheckBOMLists checks that bom lists every module linked into the binaries of infos (the
// replacement where one is used) at the version they were built with, with its purl, the
// Go standard library at their Go version, and nothing else.
func CheckBOMLists(bom *BOM, infos []*debug.BuildInfo) []error {
	var errs []error
	byName := map[string]Component{}
	for _, c := range bom.Components {
		byName[c.Name] = c
	}
	want := map[string]bool{"stdlib": true}
	for _, info := range infos {
		if root := bom.Metadata.Component; root.Name != info.Main.Path {
			errs = append(errs, fmt.Errorf("SBOM: the main component is %q, the binary's main module %q", root.Name, info.Main.Path))
		}
		if goVersion := strings.Fields(info.GoVersion + " ")[0]; byName["stdlib"].Version != goVersion {
			errs = append(errs, fmt.Errorf("SBOM: stdlib at %q, the binary was built with %s", byName["stdlib"].Version, goVersion))
		}
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			want[d.Path] = true
			c, ok := byName[d.Path]
			if !ok {
				errs = append(errs, fmt.Errorf("SBOM: %s@%s is linked into the binary and not listed", d.Path, d.Version))
			} else if c.Version != d.Version || c.PURL != GoPURL(d.Path, d.Version) {
				errs = append(errs, fmt.Errorf("SBOM: %s at %q (purl %q), the binary has %s", d.Path, c.Version, c.PURL, d.Version))
			}
		}
	}
	for _, c := range bom.Components {
		if !want[c.Name] {
			errs = append(errs, fmt.Errorf("SBOM: %s@%s is listed and not linked into the binaries", c.Name, c.Version))
		}
	}
	return errs
}
