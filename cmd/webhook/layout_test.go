package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// productFolders are the folders of what the webhook binary compiles in (ARCHITECTURE.md,
// "The rooms"). test/ holds the suites and their harnesses, hack/ what builds, checks and
// releases the binary: neither may be a dependency of it.
var productFolders = []string{"cmd/webhook/", "pkg/", "internal/"}

// TestBinaryShipsNoTooling keeps the rooms apart: the packages the webhook binary depends on
// (`go list -deps`, tests aside) all live in the product's folders, and every package in
// internal/ is one of them, so internal/ never again holds a harness or a tool.
func TestBinaryShipsNoTooling(t *testing.T) {
	module := goList(t, "-m")[0]
	importers := map[string][]string{} // a dependency of ours -> the packages of ours importing it
	var deps []string
	for _, line := range goList(t, "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", ".") {
		pkg, imports, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(pkg, module+"/") {
			continue
		}
		deps = append(deps, strings.TrimPrefix(pkg, module+"/"))
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, module+"/") {
				rel := strings.TrimPrefix(imp, module+"/")
				importers[rel] = append(importers[rel], strings.TrimPrefix(pkg, module+"/"))
			}
		}
	}
	require.Contains(t, deps, "pkg/rules", "go list -deps listed the engine")
	require.Contains(t, deps, "internal/memlimit", "go list -deps listed internal/")

	var outside []string
	for _, dep := range deps {
		if !inProduct(dep) {
			outside = append(outside, dep+" (imported by "+strings.Join(importers[dep], ", ")+")")
		}
	}
	assert.Empty(t, outside, "the webhook binary depends on packages outside %v", productFolders)

	var unshipped []string
	for _, pkg := range goList(t, "../../internal/...") {
		rel := strings.TrimPrefix(pkg, module+"/")
		if !slices.Contains(deps, rel) {
			unshipped = append(unshipped, rel)
		}
	}
	assert.Empty(t, unshipped, "internal/ holds packages the webhook binary does not compile in: they belong in test/ or hack/")
}

func inProduct(rel string) bool {
	for _, folder := range productFolders {
		if rel == strings.TrimSuffix(folder, "/") || strings.HasPrefix(rel, folder) {
			return true
		}
	}
	return false
}

// goList runs `go list ARGS...` in this package's folder and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	require.NoError(t, err, "go list %s", strings.Join(args, " "))
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestOnlyToolingImportsTooling keeps the ladder one way: hack/ may import the product and
// test/'s harnesses, but nothing outside hack/ imports hack/, the tests of the product and
// the e2e suite (build tag e2e) included.
func TestOnlyToolingImportsTooling(t *testing.T) {
	module := goList(t, "-m")[0]
	hack := module + "/hack/"
	lines := goList(t, "-tags", "e2e", "-f", "{{.ImportPath}}:{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "../../...")
	require.Greater(t, len(lines), 40, "go list listed the module's packages")
	var up []string
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, ":")
		if strings.HasPrefix(pkg+"/", hack) {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, hack) {
				up = append(up, strings.TrimPrefix(pkg, module+"/")+" -> "+strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	assert.Empty(t, up, "packages outside hack/ import tooling (a library tests share belongs in test/harness)")
}
