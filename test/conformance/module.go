package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/policyattachment/webhook/test/kindsdrift"
)

const (
	// GatewayAPIModule is the module whose version go.mod pins; the conformance suite is
	// released with it, at the same version.
	GatewayAPIModule = "sigs.k8s.io/gateway-api"
	// ConformanceModule is the conformance suite's own module.
	ConformanceModule = GatewayAPIModule + "/conformance"
)

// Requirements are the module versions a go.mod requires, by module path.
type Requirements map[string]string

// ReadGoMod returns the requirements of the go.mod at path. It reads only `require` lines
// (single or in a block): all the corpus needs is which version of each module to read.
func ReadGoMod(path string) (Requirements, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reqs := Requirements{}
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case inBlock && fields[0] == ")":
			inBlock = false
		case inBlock && len(fields) >= 2:
			reqs[fields[0]] = fields[1]
		case fields[0] == "require" && len(fields) == 2 && fields[1] == "(":
			inBlock = true
		case fields[0] == "require" && len(fields) >= 3:
			reqs[fields[1]] = fields[2]
		}
	}
	if reqs[GatewayAPIModule] == "" {
		return nil, fmt.Errorf("%s: no requirement of %s", path, GatewayAPIModule)
	}
	return reqs, sc.Err()
}

// FindGoMod returns the go.mod of the module that holds dir (dir or a parent of it).
func FindGoMod(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "go.mod")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// Modules finds the source of the packages whose values the tests' assertions take: the
// conformance module and Gateway API at the pinned version, and apimachinery and k8s.io/utils
// (metav1.ConditionTrue, types.NamespacedName, ptr.To) at the version our go.mod requires.
// Others (clients, polls, HTTP) give nothing an assertion reads, and are not read: so the
// corpus needs no module a build of the webhook does not already hold in the cache.
type Modules struct {
	ctx     context.Context
	Version string
	reqs    Requirements
	dirs    map[string]string
}

// NewModules reads from the module cache at the Gateway API version reqs pins.
func NewModules(ctx context.Context, reqs Requirements) *Modules {
	return &Modules{ctx: ctx, Version: reqs[GatewayAPIModule], reqs: reqs, dirs: map[string]string{}}
}

// ConformanceDir is the root of the conformance module, downloaded once through the module
// proxy when the cache does not hold it.
func (m *Modules) ConformanceDir() (string, error) { return m.moduleDir(ConformanceModule, m.Version) }

func (m *Modules) moduleDir(module, version string) (string, error) {
	key := module + "@" + version
	if dir, ok := m.dirs[key]; ok {
		return dir, nil
	}
	dir, err := kindsdrift.ModuleDir(m.ctx, module, version)
	if err != nil {
		return "", err
	}
	m.dirs[key] = dir
	return dir, nil
}

// valueModules are the modules besides Gateway API's whose constants and helpers the
// assertions' arguments use.
var valueModules = []string{"k8s.io/apimachinery", "k8s.io/utils"}

// PackageDir returns the directory of an imported package, or "" for a package whose values
// are not read (the standard library's, a client's).
func (m *Modules) PackageDir(importPath string) (string, error) {
	module, version := "", ""
	switch {
	case within(importPath, ConformanceModule):
		module, version = ConformanceModule, m.Version
	case within(importPath, GatewayAPIModule):
		// The conformance module replaces Gateway API with the repository it ships in.
		module, version = GatewayAPIModule, m.Version
	default:
		for _, mod := range valueModules {
			if within(importPath, mod) {
				module, version = mod, m.reqs[mod]
			}
		}
	}
	if module == "" || version == "" {
		return "", nil
	}
	dir, err := m.moduleDir(module, version)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(importPath, module))), nil
}

func within(importPath, module string) bool {
	return importPath == module || strings.HasPrefix(importPath, module+"/")
}
