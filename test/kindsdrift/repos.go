package kindsdrift

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// RepoSource is a repository whose CRDs no Go module serves: `make kind-facts`
// (hack/facts/kind-facts) reads them once from a local git clone, at its ref (RefsFile), and keeps
// only the facts the comparison reads (FactFile, under FactsDir), which the kinds test and
// `make kinds-drift` compare with the rows exactly as they compare a module's CRDs.
type RepoSource struct {
	// Name is the folder of its fact files under FactsDir, and the name -at takes.
	Name string
	// Repo is the GitHub repository, "owner/name". The tag or commit it is read at is in
	// RefsFile: the release the rows cite (their readAt), or the newest where they cite none.
	Repo string
	// Globs are the CRD files, relative to the repository root (path.Match patterns); the
	// first glob that matches any file at the ref is used.
	Globs []string
	// Groups are the API groups whose policy kinds this source's CRDs define.
	Groups []string
	// Kinds, when set, are the only kinds ("group/Kind") read from it: two releases of one
	// repository are two sources (Linkerd's rows cite two).
	Kinds []string
}

// FactsDir is where the fact files live, relative to the repository root: one folder per
// RepoSource, and RefsFile.
const FactsDir = "testdata/kindfacts"

// RefsFile, in FactsDir, maps each RepoSource's name to the tag or commit it is read at.
// `make kind-facts AT=name=ref` reads a source at another ref and records it here.
const RefsFile = "refs.yaml"

// LoadRefs reads RefsFile from dir.
func LoadRefs(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, RefsFile))
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	if err := yaml.UnmarshalStrict(data, &refs); err != nil {
		return nil, fmt.Errorf("%s: %w", RefsFile, err)
	}
	return refs, nil
}

// WriteRefs writes RefsFile into dir.
func WriteRefs(dir string, refs map[string]string) error {
	data, err := yaml.Marshal(refs)
	if err != nil {
		return err
	}
	head := "# The tag or commit each repository of internal/kindsdrift.DefaultRepoSources is read at\n" +
		"# by `make kind-facts`; `make kind-facts AT=name=ref` changes one. Rows cite it (readAt).\n"
	return os.WriteFile(filepath.Join(dir, RefsFile), append([]byte(head), data...), 0o644)
}

// DefaultRepoSources are the repositories the built-in rows of kinds without a served
// module are checked against, each at the ref RefsFile names.
func DefaultRepoSources() []RepoSource {
	return []RepoSource{
		{
			Name: "nginx-gateway-fabric", Repo: "nginx/nginx-gateway-fabric",
			Globs: []string{"config/crd/bases/gateway.nginx.org_*.yaml"}, Groups: []string{"gateway.nginx.org"},
		},
		{
			Name: "kuadrant", Repo: "kuadrant/kuadrant-operator",
			Globs: []string{"config/crd/bases/*.yaml"}, Groups: []string{"kuadrant.io", "extensions.kuadrant.io"},
		},
		{
			// kgateway's rows cite kgateway main as forked in sheidkamp/kgateway (the
			// TrafficPolicy row: 1f3a3eaf; kgateway-dev/kgateway's own clone here stops in
			// 2025); they name no readAt.
			Name: "kgateway", Repo: "sheidkamp/kgateway",
			Globs: []string{"install/helm/kgateway-crds/templates/gateway.kgateway.dev_*.yaml"}, Groups: []string{"gateway.kgateway.dev"},
		},
		{
			// The AgentgatewayPolicy row cites 75b4e6ce for the CRD's maxItems; it names
			// no readAt.
			Name: "agentgateway", Repo: "agentgateway/agentgateway",
			Globs: []string{"controller/install/helm/agentgateway-crds/templates/agentgateway.dev_*.yaml"}, Groups: []string{"agentgateway.dev"},
		},
		{
			Name: "linkerd", Repo: "linkerd/linkerd2",
			Globs: []string{"charts/linkerd-crds/templates/policy/*.yaml"}, Groups: []string{"policy.linkerd.io"},
			Kinds: []string{"policy.linkerd.io/AuthorizationPolicy"},
		},
		{
			Name: "linkerd-ratelimit", Repo: "linkerd/linkerd2",
			Globs: []string{"charts/linkerd-crds/templates/policy/*.yaml"}, Groups: []string{"policy.linkerd.io"},
			Kinds: []string{"policy.linkerd.io/HTTPLocalRateLimitPolicy"},
		},
		{
			Name: "envoy-ai-gateway", Repo: "envoyproxy/ai-gateway",
			Globs: []string{"manifests/charts/ai-gateway-crds-helm/templates/aigateway.envoyproxy.io_*.yaml"}, Groups: []string{"aigateway.envoyproxy.io"},
		},
		{
			Name: "gke", Repo: "GoogleCloudPlatform/gke-gateway-api",
			Globs: []string{"config/crd/networking.gke.io_*.yaml"}, Groups: []string{"networking.gke.io"},
		},
		{
			Name: "aws", Repo: "aws/aws-application-networking-k8s",
			Globs: []string{"config/crds/bases/application-networking.k8s.aws_*.yaml"}, Groups: []string{"application-networking.k8s.aws"},
		},
	}
}

// FactFile is what one CRD of a repository says, as the comparison reads it, and where it
// was read: a file under FactsDir.
type FactFile struct {
	// Repository ("owner/name"), Ref (as the source names it), Commit (the full hash Ref
	// resolved to) and Path (the CRD file in the repository) say where the facts come from.
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
	Commit     string `json:"commit"`
	Path       string `json:"path"`
	crdfacts.KindFacts
}

// Where names the file the facts were read from: "owner/name@ref path".
func (f FactFile) Where() string {
	return f.Repository + "@" + f.Ref + " " + f.Path
}

// factsHeader opens every fact file.
const factsHeader = "# Facts read by `make kind-facts` (hack/facts/kind-facts) from the CRD at repository, path and\n" +
	"# commit below; not the CRD. test/kindsdrift compares the rows with them. Do not edit.\n"

// GitDir finds the git directory of repo ("owner/name") under mirror: mirror/owner+name/repo
// (the layout of a bare mirror), mirror/owner+name or mirror/name.git.
func GitDir(mirror, repo string) (string, error) {
	owner, name, _ := strings.Cut(repo, "/")
	dirs := []string{owner + "+" + name, name + ".git"}
	// GitHub names are case-insensitive: a clone named "Kuadrant+kuadrant-operator" serves
	// "kuadrant/kuadrant-operator".
	if entries, err := os.ReadDir(mirror); err == nil {
		for _, e := range entries {
			for i, d := range dirs {
				if strings.EqualFold(e.Name(), d) {
					dirs[i] = e.Name()
				}
			}
		}
	}
	candidates := []string{
		filepath.Join(mirror, dirs[0], "repo"),
		filepath.Join(mirror, dirs[0]),
		filepath.Join(mirror, dirs[1]),
	}
	for _, c := range candidates {
		if out, err := exec.Command("git", "--git-dir", c, "rev-parse", "--git-dir").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("no git clone of %s under %s (looked for %s)", repo, mirror, strings.Join(candidates, ", "))
}

// ReadRepo reads the CRDs of src at ref from the git directory gitDir and returns the facts
// of each CRD of its groups (and Kinds) that a row describes or that carries the policy
// label, sorted by kind.
func ReadRepo(ctx context.Context, gitDir string, src RepoSource, ref string, rows []*kinds.KindRow) ([]FactFile, error) {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	out, err := git("rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Repo, err)
	}
	commit := strings.TrimSpace(string(out))
	out, err = git("ls-tree", "-r", "--name-only", commit)
	if err != nil {
		return nil, err
	}
	files, err := matchGlobs(strings.Split(strings.TrimSpace(string(out)), "\n"), src.Globs)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", src.Repo, ref, err)
	}
	known := map[string]bool{}
	for _, r := range rows {
		known[r.Group+"/"+r.Kind] = true
	}
	var facts []FactFile
	for _, f := range files {
		data, err := git("show", commit+":"+f)
		if err != nil {
			return nil, err
		}
		crds, err := parseCRDs(untemplate(data), f)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", src.Repo, ref, err)
		}
		for _, c := range crds {
			gk := c.Group + "/" + c.Kind
			if !src.reads(c.Group, gk) || (!known[gk] && c.PolicyLabel == "") {
				continue
			}
			facts = append(facts, FactFile{Repository: src.Repo, Ref: ref, Commit: commit, Path: f, KindFacts: crdfacts.KindFactsOf(c)})
		}
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].Kind < facts[j].Kind })
	return facts, nil
}

// reads says the source's facts include the kind gk of group.
func (s RepoSource) reads(group, gk string) bool {
	if len(s.Kinds) > 0 {
		for _, k := range s.Kinds {
			if k == gk {
				return true
			}
		}
		return false
	}
	for _, g := range s.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// matchGlobs returns the files of the first glob that matches any, sorted.
func matchGlobs(files, globs []string) ([]string, error) {
	for _, g := range globs {
		var out []string
		for _, f := range files {
			ok, err := path.Match(g, f)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			sort.Strings(out)
			return out, nil
		}
	}
	return nil, fmt.Errorf("no file matches %v", globs)
}

var (
	templateLine   = regexp.MustCompile(`^\s*\{\{.*\}\}\s*$`)
	templateAction = regexp.MustCompile(`\{\{.*?\}\}`)
)

// untemplate makes a Helm template of a CRD (Linkerd's charts) YAML: a line that is only a
// template action goes, an action inside a line becomes a placeholder. The CRDs template
// their labels and annotations, never their schemas.
func untemplate(data []byte) []byte {
	if !bytes.Contains(data, []byte("{{")) {
		return data
	}
	lines := strings.Split(string(data), "\n")
	out := lines[:0]
	for _, l := range lines {
		if templateLine.MatchString(l) {
			continue
		}
		out = append(out, templateAction.ReplaceAllString(l, "templated"))
	}
	return []byte(strings.Join(out, "\n"))
}

// WriteFactFiles replaces the fact files of src under dir (FactsDir, from the repository
// root) with facts: one file per kind, <Kind>.<group>.yaml.
func WriteFactFiles(dir string, src RepoSource, facts []FactFile) error {
	sub := filepath.Join(dir, src.Name)
	old, err := filepath.Glob(filepath.Join(sub, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return err
	}
	for _, f := range facts {
		data, err := yaml.Marshal(f)
		if err != nil {
			return err
		}
		name := filepath.Join(sub, f.Kind+"."+f.Group+".yaml")
		if err := os.WriteFile(name, append([]byte(factsHeader), data...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// LoadFactFiles reads every fact file under dir, by source name (its folder).
func LoadFactFiles(dir string) (map[string][]FactFile, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string][]FactFile{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ff FactFile
		if err := yaml.UnmarshalStrict(data, &ff); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if ff.Repository == "" || ff.Commit == "" || ff.Path == "" || ff.Group == "" || ff.Kind == "" {
			return nil, fmt.Errorf("%s: a fact file names its repository, commit, path, group and kind", f)
		}
		name := filepath.Base(filepath.Dir(f))
		out[name] = append(out[name], ff)
	}
	return out, nil
}

// LoadAllFactFiles reads every fact file under dir (LoadFactFiles), sorted by source name.
func LoadAllFactFiles(dir string) ([]FactFile, error) {
	bySource, err := LoadFactFiles(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(bySource))
	for n := range bySource {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []FactFile
	for _, n := range names {
		out = append(out, bySource[n]...)
	}
	return out, nil
}
