package release

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// The CycloneDX document SBOM writes: the fields of the specification's JSON schema this
// release fills in.
type (
	BOM struct {
		BOMFormat    string       `json:"bomFormat"`
		SpecVersion  string       `json:"specVersion"`
		SerialNumber string       `json:"serialNumber"`
		Version      int          `json:"version"`
		Metadata     BOMMetadata  `json:"metadata"`
		Components   []Component  `json:"components"`
		Dependencies []Dependency `json:"dependencies"`
	}
	BOMMetadata struct {
		Timestamp string    `json:"timestamp"`
		Tools     BOMTools  `json:"tools"`
		Component Component `json:"component"`
	}
	BOMTools struct {
		Components []Component `json:"components"`
	}
	Component struct {
		Type        string     `json:"type"`
		BOMRef      string     `json:"bom-ref,omitempty"`
		Group       string     `json:"group,omitempty"`
		Name        string     `json:"name"`
		Version     string     `json:"version,omitempty"`
		Description string     `json:"description,omitempty"`
		Scope       string     `json:"scope,omitempty"`
		PURL        string     `json:"purl,omitempty"`
		Properties  []Property `json:"properties,omitempty"`
	}
	Property struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	Dependency struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}
)

// SpecVersion is the CycloneDX version of the SBOM.
const SpecVersion = "1.6"

// GoModule is one module of `go list -m -json all`.
type GoModule struct {
	Path     string
	Version  string
	Main     bool
	Indirect bool
	Replace  *GoModule
}

// Edge is one requirement of `go mod graph`: From (path@version, or the main module's bare
// path) requires To (path@version).
type Edge struct{ From, To string }

// SBOMInput is what the SBOM is made of.
type SBOMInput struct {
	Version string             // the release version, the main module's
	Infos   []*debug.BuildInfo // the binaries' embedded build information (`go version -m`)
	Modules []GoModule         // the module graph's build list (`go list -m -json all`)
	Graph   []Edge             // the module graph's requirements (`go mod graph`)
	VCS     *VCS               // the commit, when the build information does not say
}

// SBOM is a CycloneDX 1.6 JSON document of the Go modules linked into the binaries whose
// build information is given: one component per module (its path, the version the build
// used, replacements applied, a pkg:golang purl) and one for the Go standard library; the
// dependencies are the module graph's requirements among those modules, the main module
// depending on what its go.mod requires directly. The timestamp is the commit's (vcs.time),
// and the serial number is derived from the content: the same binaries make the same
// document.
func SBOM(in SBOMInput) ([]byte, error) {
	if len(in.Infos) == 0 {
		return nil, fmt.Errorf("no build information")
	}
	main := in.Infos[0].Main.Path
	settings := map[string]string{}
	goVersion := strings.Fields(in.Infos[0].GoVersion + " ")[0]
	for _, info := range in.Infos {
		if info.Main.Path != main {
			return nil, fmt.Errorf("binaries of two main modules: %s and %s", main, info.Main.Path)
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if in.VCS != nil {
		settings["vcs.revision"] = in.VCS.Revision
		settings["vcs.time"] = in.VCS.Time.UTC().Format(time.RFC3339)
		settings["vcs.modified"] = fmt.Sprint(in.VCS.Modified)
	}

	// The linked modules, by path: a build list holds one version of each.
	linked := map[string]*Component{}
	for _, info := range in.Infos {
		for _, d := range info.Deps {
			path, version, replaces := d.Path, d.Version, ""
			if d.Replace != nil {
				replaces = d.Path + "@" + d.Version
				path, version = d.Replace.Path, d.Replace.Version
			}
			if c, ok := linked[d.Path]; ok {
				if c.Version != version {
					return nil, fmt.Errorf("%s is linked at %s and %s", d.Path, c.Version, version)
				}
				continue
			}
			c := &Component{Type: "library", Name: path, Version: version, Scope: "required", PURL: GoPURL(path, version)}
			c.BOMRef = c.PURL
			if replaces != "" {
				c.Description = "replaces " + replaces
				c.Properties = []Property{{Name: "go.module.replaces", Value: replaces}}
			}
			linked[d.Path] = c
		}
	}
	std := Component{Type: "library", Name: "stdlib", Version: goVersion, Scope: "required",
		PURL: GoPURL("stdlib", strings.TrimPrefix(goVersion, "go")), Description: "the Go standard library and runtime"}
	std.BOMRef = std.PURL

	root := Component{Type: "application", Name: main, Version: in.Version, PURL: GoPURL(main, in.Version),
		Description: "Admission webhook for Gateway API policy attachment (GEP-713)"}
	root.BOMRef = root.PURL
	var goos, goarch []string
	for _, info := range in.Infos {
		for _, s := range info.Settings {
			switch s.Key {
			case "GOOS":
				goos = appendNew(goos, s.Value)
			case "GOARCH":
				goarch = appendNew(goarch, s.Value)
			}
		}
	}
	for _, p := range []Property{
		{"go.version", goVersion}, {"go.build.GOOS", strings.Join(goos, ",")}, {"go.build.GOARCH", strings.Join(goarch, ",")},
		{"vcs.revision", settings["vcs.revision"]}, {"vcs.time", settings["vcs.time"]}, {"vcs.modified", settings["vcs.modified"]},
	} {
		if p.Value != "" {
			root.Properties = append(root.Properties, p)
		}
	}

	// The requirements among linked modules, at the versions the build selected.
	direct := map[string]bool{}
	for _, m := range in.Modules {
		if !m.Main && !m.Indirect {
			direct[m.Path] = true
		}
	}
	deps := map[string]map[string]bool{root.BOMRef: {std.BOMRef: true}}
	reached := map[string]bool{}
	for path, c := range linked {
		if direct[path] {
			deps[root.BOMRef][c.BOMRef] = true
			reached[path] = true
		}
	}
	for _, e := range in.Graph {
		fromPath, fromVersion, _ := strings.Cut(e.From, "@")
		toPath, _, _ := strings.Cut(e.To, "@")
		from, to := linked[fromPath], linked[toPath]
		if from == nil || to == nil || from == to || fromVersion != selected(in.Infos, fromPath) {
			continue
		}
		if deps[from.BOMRef] == nil {
			deps[from.BOMRef] = map[string]bool{}
		}
		deps[from.BOMRef][to.BOMRef] = true
		reached[toPath] = true
	}
	// A linked module no requirement among linked modules reaches: the main module's go.mod
	// requires it (go.mod lists every module that provides a package).
	for path, c := range linked {
		if !reached[path] {
			deps[root.BOMRef][c.BOMRef] = true
		}
	}

	bom := BOM{BOMFormat: "CycloneDX", SpecVersion: SpecVersion, Version: 1}
	bom.Metadata.Timestamp = time.Now().UTC().Format(time.RFC3339)
	if t, err := time.Parse(time.RFC3339, settings["vcs.time"]); err == nil {
		bom.Metadata.Timestamp = t.UTC().Format(time.RFC3339)
	}
	bom.Metadata.Tools.Components = []Component{{Type: "application", Group: main, Name: "hack/release", Version: in.Version}}
	bom.Metadata.Component = root
	bom.Components = append(bom.Components, std)
	for _, c := range linked {
		bom.Components = append(bom.Components, *c)
	}
	sort.Slice(bom.Components, func(i, j int) bool { return bom.Components[i].BOMRef < bom.Components[j].BOMRef })
	refs := []string{root.BOMRef}
	for _, c := range bom.Components {
		refs = append(refs, c.BOMRef)
	}
	for _, ref := range refs {
		d := Dependency{Ref: ref, DependsOn: []string{}}
		for to := range deps[ref] {
			d.DependsOn = append(d.DependsOn, to)
		}
		sort.Strings(d.DependsOn)
		bom.Dependencies = append(bom.Dependencies, d)
	}
	content, err := json.Marshal(bom)
	if err != nil {
		return nil, err
	}
	bom.SerialNumber = uuid5(root.PURL + "#" + fmt.Sprintf("%x", sha256.Sum256(content)))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(bom); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func selected(infos []*debug.BuildInfo, path string) string {
	for _, info := range infos {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return ""
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// GoPURL is the package URL of a Go module: pkg:golang/PATH@VERSION, each path segment and
// the version percent-encoded. The path keeps its case, as Go module paths are
// case-sensitive (govulncheck and cyclonedx-gomod write them so too).
func GoPURL(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = purlEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + purlEscape(version)
	}
	return p
}

func purlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// uuid5 is the name-based (SHA-1) UUID of name in the URL namespace, as urn:uuid:...
func uuid5(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.Sum(append(ns, name...))
	u := h[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// ReadGoModules runs `go list -m -json all` in the module at dir.
func ReadGoModules(dir string) ([]GoModule, error) {
	cmd := exec.Command("go", "list", "-m", "-json", "all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -json all: %w%s", err, exitStderr(err))
	}
	var mods []GoModule
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m GoModule
		if err := dec.Decode(&m); err == io.EOF {
			return mods, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list -m -json all: %w", err)
		}
		mods = append(mods, m)
	}
}

// ReadModGraph runs `go mod graph` in the module at dir.
func ReadModGraph(dir string) ([]Edge, error) {
	cmd := exec.Command("go", "mod", "graph")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod graph: %w%s", err, exitStderr(err))
	}
	return ParseModGraph(bytes.NewReader(out))
}

// ParseModGraph reads `go mod graph`'s lines: "FROM TO", each path@version (the main
// module's without a version).
func ParseModGraph(r io.Reader) ([]Edge, error) {
	var edges []Edge
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("go mod graph: unexpected line %q", line)
		}
		edges = append(edges, Edge{From: f[0], To: f[1]})
	}
	return edges, sc.Err()
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
