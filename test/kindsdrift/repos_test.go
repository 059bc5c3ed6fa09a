package kindsdrift

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// templatedCRD is a policy CRD as a Helm chart ships it (Linkerd's): templated labels and
// annotations around a plain schema.
const templatedCRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: samplepolicies.example.io
  annotations:
    {{ include "partials.annotations.created-by" . }}
  labels:
    helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
    gateway.networking.k8s.io/policy: Direct
spec:
  group: example.io
  names: {kind: SamplePolicy}
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema: {openAPIV3Schema: {properties: {spec: {properties: {targetRef: {properties: {kind: {type: string}, name: {type: string}}}}}}}}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            x-kubernetes-validations:
            - rule: "!has(self.rewrite) || self.targetRefs.all(r, r.kind == 'HTTPRoute')"
            properties:
              targetRefs:
                maxItems: 4
                items:
                  properties:
                    kind: {type: string, enum: [Gateway, HTTPRoute]}
                    name: {type: string}
              rewrite: {type: boolean}
              auth:
                properties:
                  secretRef:
                    properties:
                      name: {type: string}
                      kind: {type: string, enum: [Secret]}
                      namespace: {type: string}
`

// otherCRD is a CRD of the source's group that is neither a row's kind nor labelled.
const otherCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backends.example.io}
spec:
  group: example.io
  names: {kind: Backend}
  versions: [{name: v1, served: true, storage: true}]
`

// gitRepo makes a git repository with files committed and tagged v1.0.0, and returns its
// git directory.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("init", "-q")
	for name, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	run("add", ".")
	run("commit", "-q", "-m", "crds")
	run("tag", "v1.0.0")
	return filepath.Join(dir, ".git")
}

// ReadRepo reads the CRDs a source's first matching glob names at a ref, keeps the row
// kinds and labelled kinds of its groups, and stamps each with repository, ref, commit and
// path; written and loaded again, the facts compare with a row exactly as the CRD does.
func TestReadRepoWritesFactsTheComparisonReadsAsTheCRD(t *testing.T) {
	gitDir := gitRepo(t, map[string]string{
		"charts/crds/templates/samplepolicies.yaml": templatedCRD,
		"charts/crds/templates/backends.yaml":       otherCRD,
		"charts/crds/templates/NOTES.txt":           "not a CRD",
	})
	src := RepoSource{Name: "sample", Repo: "example/sample", Globs: []string{"config/crd/*.yaml", "charts/crds/templates/*.yaml"}, Groups: []string{"example.io"}}
	facts, err := ReadRepo(context.Background(), gitDir, src, "v1.0.0", nil)
	require.NoError(t, err)
	require.Len(t, facts, 1, "the labelled kind only")
	f := facts[0]
	assert.Equal(t, "example/sample", f.Repository)
	assert.Equal(t, "v1.0.0", f.Ref)
	assert.Regexp(t, `^[0-9a-f]{40}$`, f.Commit)
	assert.Equal(t, "charts/crds/templates/samplepolicies.yaml", f.Path)
	assert.Equal(t, "Direct", f.PolicyLabel)
	assert.Equal(t, []string{"v1alpha1", "v1"}, f.Served)
	assert.Equal(t, "v1", f.Storage)
	assert.Equal(t, crdfacts.Facts{
		Version:          "v1",
		TargetRefFields:  []string{"targetRefs"},
		MaxTargetRefs:    4,
		TargetKinds:      []string{"Gateway", "HTTPRoute"},
		FieldTargetKinds: map[string][]string{"rewrite": {"HTTPRoute"}},
		TargetNamespace:  "absent",
		References:       []crdfacts.Ref{{Path: "auth.secretRef", Namespaced: true, Kinds: []string{"Secret"}}},
	}, f.Versions["v1"])

	withRow, err := ReadRepo(context.Background(), gitDir, src, "v1.0.0", []*kinds.KindRow{{Group: "example.io", Kind: "Backend"}})
	require.NoError(t, err)
	assert.Len(t, withRow, 2, "a row's kind is kept whatever its label")

	dir := t.TempDir()
	require.NoError(t, WriteFactFiles(dir, src, facts))
	data, err := os.ReadFile(filepath.Join(dir, "sample", "SamplePolicy.example.io.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), factsHeader), "the file says what it is")
	assert.NotContains(t, string(data), "openAPIV3Schema", "facts, not the CRD")
	loaded, err := LoadFactFiles(dir)
	require.NoError(t, err)
	require.Len(t, loaded["sample"], 1)

	row := &kinds.KindRow{
		Group: "example.io", Kind: "SamplePolicy", Versions: []string{"v1"}, TargetRefFields: []string{"targetRefs"}, MaxTargetRefs: 2,
		Targets:      []kinds.TargetKind{{Group: "gateway.networking.k8s.io", Kind: "Gateway"}},
		FieldTargets: []kinds.FieldTarget{{Field: "rewrite", TargetKinds: []string{"Gateway"}}},
	}
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(untemplate([]byte(strings.TrimPrefix(templatedCRD, "---\n"))), &obj))
	wantDrift, wantFacts := crdfacts.Compare(row, crdfacts.FromObject(obj))
	gotDrift, gotFacts := crdfacts.CompareKindFacts(row, loaded["sample"][0].KindFacts)
	assert.Equal(t, wantDrift, gotDrift)
	assert.Equal(t, wantFacts, gotFacts)
	assert.Len(t, gotDrift, 5, "versions v1alpha1, maxTargetRefs, targetKinds HTTPRoute, fieldTargetKinds rewrite, reference auth.secretRef")

	_, err = ReadRepo(context.Background(), gitDir, src, "v9.9.9", nil)
	assert.ErrorContains(t, err, "example/sample: git rev-parse --verify v9.9.9^{commit}")
	_, err = ReadRepo(context.Background(), gitDir, RepoSource{Repo: "example/sample", Globs: []string{"crds/*.yaml"}}, "v1.0.0", nil)
	assert.EqualError(t, err, "example/sample@v1.0.0: no file matches [crds/*.yaml]")
}

func TestUntemplate(t *testing.T) {
	in := "metadata:\n  annotations:\n    {{ include \"x\" . }}\n  labels:\n    chart: {{ .Chart.Name }}-{{ .Chart.Version }}\n    plain: yes\n"
	assert.Equal(t, "metadata:\n  annotations:\n  labels:\n    chart: templated-templated\n    plain: yes\n", string(untemplate([]byte(in))))
	assert.Equal(t, "a: b\n", string(untemplate([]byte("a: b\n"))))
}

// A clone is found under the mirror whatever the case of its owner's name.
func TestGitDir(t *testing.T) {
	mirror := t.TempDir()
	gitDir := gitRepo(t, map[string]string{"a": "b"})
	require.NoError(t, os.MkdirAll(filepath.Join(mirror, "Example+sample"), 0o755))
	require.NoError(t, os.Rename(gitDir, filepath.Join(mirror, "Example+sample", "repo")))
	got, err := GitDir(mirror, "example/sample")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(mirror, "Example+sample", "repo"), got)
	_, err = GitDir(mirror, "example/other")
	assert.ErrorContains(t, err, "no git clone of example/other under "+mirror)
}
