// Package testcrds lists the CustomResourceDefinitions of every kind the testdata corpus
// (testdata/corpus) uses, with their real validation: the implementations' own CRD files
// read from the Go module cache where the project is served as a Go module (Gateway API,
// Envoy Gateway, Istio; kindsdrift.DefaultSources names the versions), and the CRDs in
// testdata/crds/<project>/ for the projects the module proxy does not serve (each file
// cites the repository, tag and path it restates).
//
// Tests use it to give `webhook check` the schemas the API server enforces, and to install
// the same schemas in a local API server (test/apiserver). It imports no rule package.
package testcrds

import (
	"context"
	"path/filepath"
	"sort"
)

// LocalDir is where the CRDs written for this repository live, relative to the repository
// root: one directory per project, one file per CRD.
const LocalDir = "testdata/crds"

// CorpusDir holds the scenarios whose kinds Files covers, relative to the repository root.
const CorpusDir = "testdata/corpus"

// Files returns the CRD files for the corpus under root (the repository root): every
// Gateway API CRD file at the version go.mod requires, the module files of Envoy Gateway
// and Istio that define a kind the corpus uses (downloading a module when the module cache
// lacks it), then testdata/crds/*/*.yaml. Paths are absolute, module files first.
func Files(ctx context.Context, root string) ([]string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	used, err := corpusKinds(filepath.Join(root, CorpusDir))
	if err != nil {
		return nil, err
	}
	files, err := moduleFiles(ctx, used)
	if err != nil {
		return nil, err
	}
	local, err := filepath.Glob(filepath.Join(root, LocalDir, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(local)
	return append(files, local...), nil
}
