package testcrds

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/test/kindsdrift"
)

// GatewayAPI is the kindsdrift source whose CRD files are all returned: the corpus'
// Gateways, Routes and grants are its kinds, and a cluster installs them together.
const GatewayAPI = "gateway-api"

// moduleSources are the kindsdrift sources the corpus' kinds come from.
var moduleSources = map[string]bool{GatewayAPI: true, "envoy-gateway": true, "istio": true}

// moduleFiles returns, for each source of moduleSources, its CRD files (the first of its
// globs that matches) that define a kind in used ("group/Kind"); every CRD file of
// Gateway API.
func moduleFiles(ctx context.Context, used map[string]bool) ([]string, error) {
	var out []string
	for _, src := range kindsdrift.DefaultSources() {
		if !moduleSources[src.Name] {
			continue
		}
		dir, err := kindsdrift.ModuleDir(ctx, src.Module, src.Version)
		if err != nil {
			return nil, err
		}
		files, err := globFirst(dir, src.Globs)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s@%s: no CRD file matches %v", src.Module, src.Version, src.Globs)
		}
		for _, f := range files {
			defined, err := definedKinds(f)
			if err != nil {
				return nil, err
			}
			if len(defined) == 0 {
				continue // a kustomization or a ValidatingAdmissionPolicy
			}
			if src.Name == GatewayAPI || anyUsed(defined, used) {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

func globFirst(dir string, globs []string) ([]string, error) {
	for _, g := range globs {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			sort.Strings(m)
			return m, nil
		}
	}
	return nil, nil
}

func anyUsed(defined []string, used map[string]bool) bool {
	for _, k := range defined {
		if used[k] {
			return true
		}
	}
	return false
}

// crdGroup, crdNames and nameKind find a CustomResourceDefinition's group and kind as
// controller-gen and Istio's generator write them (block style: "spec:" then "group:" and
// "names:" with its "kind:"), without parsing the schema, which is megabytes in some files.
var (
	crdKind  = regexp.MustCompile(`(?m)^kind:\s*CustomResourceDefinition\s*$`)
	crdGroup = regexp.MustCompile(`(?m)^  group:\s*(\S+)\s*$`)
	crdNames = regexp.MustCompile(`(?m)^  names:\s*\n((?:    .*\n)+)`)
	nameKind = regexp.MustCompile(`(?m)^    kind:\s*(\S+)\s*$`)
	docSep   = regexp.MustCompile(`(?m)^---\s*$`)
)

// definedKinds returns the "group/Kind" of each CustomResourceDefinition in file.
func definedKinds(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, doc := range docSep.Split(string(data), -1) {
		if !crdKind.MatchString(doc) {
			continue
		}
		g := crdGroup.FindStringSubmatch(doc)
		n := crdNames.FindStringSubmatch(doc)
		var k []string
		if n != nil {
			k = nameKind.FindStringSubmatch(n[1])
		}
		if g != nil && k != nil {
			out = append(out, strings.Trim(g[1], `"'`)+"/"+strings.Trim(k[1], `"'`))
			continue
		}
		// Another layout (flow style): parse the document, small in such files.
		var crd struct {
			Spec struct {
				Group string
				Names struct{ Kind string }
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if crd.Spec.Group == "" || crd.Spec.Names.Kind == "" {
			return nil, fmt.Errorf("%s: a CustomResourceDefinition without spec.group or spec.names.kind", file)
		}
		out = append(out, crd.Spec.Group+"/"+crd.Spec.Names.Kind)
	}
	return out, nil
}

// corpusKinds returns the "group/Kind" of every object in the corpus' scenarios.
func corpusKinds(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenario under %s", dir)
	}
	used := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			var tm struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if tm.Kind == "" {
				continue
			}
			group, _, found := strings.Cut(tm.APIVersion, "/")
			if !found {
				group = "" // the core group ("v1")
			}
			used[group+"/"+tm.Kind] = true
		}
	}
	return used, nil
}
