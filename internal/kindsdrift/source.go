// Package kindsdrift reads the CRDs policy implementations ship in their Go modules and
// compares each built-in kind row with the CRD of its kind: which target-reference fields
// exist, targetRefs' maxItems, the served versions, the target kinds and groups the CRD's
// enums and CEL rules admit, per-field CEL target rules, whether a target may name a
// namespace, and the reference-shaped fields of the spec. The kinds test
// (kindsdrift_test.go) fails on drift it does not list; `make kinds-drift` prints the drift
// at any module version.
//
// CRDs are read from the module cache (`go mod download`), never copied into the repository
// and never added to go.mod.
package kindsdrift

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/crdfacts"
)

// Source is a Go module that ships CRDs, at one version.
type Source struct {
	// Name is a short name for flags and messages ("gateway-api").
	Name    string
	Module  string
	Version string
	// Globs are the CRD files, relative to the module's root; the first glob that
	// matches any file is used (layouts move between releases).
	Globs []string
	// Groups are the API groups whose policy kinds this source's CRDs define.
	Groups []string
}

// DefaultSources are the modules and versions the built-in rows are checked against: the
// version the rows cite, or the newest release where they cite a development commit.
func DefaultSources() []Source {
	return []Source{
		{
			// The version go.mod requires (the rows cite Gateway API v1.6).
			Name: "gateway-api", Module: "sigs.k8s.io/gateway-api", Version: "v1.6.3",
			Globs:  []string{"config/crd/experimental/*.yaml"},
			Groups: []string{"gateway.networking.k8s.io", "gateway.networking.x-k8s.io"},
		},
		{
			// The rows cite v1.9 development commits (5e6e99ab, d32f2829); v1.9.1 is the
			// release of that line.
			Name: "envoy-gateway", Module: "github.com/envoyproxy/gateway", Version: "v1.9.1",
			Globs: []string{
				"charts/gateway-helm/charts/crds/crds/generated/*.yaml",
				"charts/gateway-helm/crds/generated/*.yaml",
			},
			Groups: []string{"gateway.envoyproxy.io"},
		},
		{
			// The rows cite istio/api at commit b8f8791d; v1.32.0 is the newest release.
			Name: "istio", Module: "istio.io/api", Version: "v1.32.0",
			Globs:  []string{"kubernetes/customresourcedefinitions.gen.yaml"},
			Groups: []string{"security.istio.io", "telemetry.istio.io", "extensions.istio.io", "networking.istio.io"},
		},
		{
			Name: "kube-agentic-networking", Module: "sigs.k8s.io/kube-agentic-networking", Version: "v0.1.0",
			Globs:  []string{"k8s/crds/*.yaml"},
			Groups: []string{"agentic.networking.x-k8s.io"},
		},
	}
}

// ModuleDir returns the root of module@version in the module cache, downloading it through
// the Go module proxy when it is not there yet. It never touches a go.mod.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		cache = strings.TrimSpace(string(out))
	}
	if cache != "" {
		dir := filepath.Join(cache, escapePath(module)+"@"+version)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: nothing is added to a go.mod
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &res); err == nil {
		if res.Error != "" {
			return "", fmt.Errorf("go mod download %s@%s: %s", module, version, res.Error)
		}
		if res.Dir != "" {
			return res.Dir, nil
		}
	}
	if runErr != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", module, version, runErr, strings.TrimSpace(stderr.String()))
	}
	return "", fmt.Errorf("go mod download %s@%s printed no Dir", module, version)
}

// escapePath is the module cache's case encoding: an upper-case letter becomes '!' and
// its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// LoadCRDs reads every CustomResourceDefinition of a source from its module directory,
// keyed "group/Kind".
func LoadCRDs(dir string, src Source) (map[string]*CRD, error) {
	var files []string
	for _, g := range src.Globs {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			files = m
			break
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s@%s: no CRD file matches %v", src.Module, src.Version, src.Globs)
	}
	sort.Strings(files)
	out := map[string]*CRD{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		for _, doc := range docSeparator.Split(string(data), -1) {
			if !strings.Contains(doc, "CustomResourceDefinition") {
				continue
			}
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			if k, _ := obj["kind"].(string); k != "CustomResourceDefinition" {
				continue
			}
			crd := crdfacts.FromObject(obj)
			if crd.Group == "" || crd.Kind == "" {
				continue
			}
			crd.File = rel
			out[crd.Group+"/"+crd.Kind] = crd
		}
	}
	return out, nil
}
