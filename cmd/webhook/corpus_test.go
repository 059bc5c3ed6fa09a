package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testcrds"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// corpusDir holds scenarios re-expressed from the implementations' own test suites, one
// file per scenario (testdata/corpus/README.md says how they are written).
const corpusDir = "../../testdata/corpus"

// TestCorpus runs every scenario through the two doors users have, given the CRDs of its
// kinds with their real validation (test/harness/testcrds) as a cluster has them: `webhook
// check` admits the policies one by one (each verdict must be the scenario's `# expect:`
// line; one the CRD refuses is denied Invalid, as the API server refuses it), and
// `webhook explain` reads them all as stored, as the implementation does (each policy's
// status must be its `# status:` line). Both kinds of line are written by hand from the
// implementation's expected output; the golden file holds check's whole text output
// (UPDATE_GOLDEN=1 rewrites golden files, never expectations).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	crds, err := testcrds.Files(context.Background(), filepath.Join("..", ".."))
	require.NoError(t, err)
	var withCRDs []string
	for _, crd := range crds {
		withCRDs = append(withCRDs, "-f", crd)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(file, corpusDir+"/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			header := corpusHeader(t, file)
			require.NotEmpty(t, header["source"], "a scenario names the test it re-expresses (# source:)")
			require.NotEmpty(t, header["expect"], "a scenario says what the implementation does (# expect:)")

			args := append([]string{"check"}, withCRDs...)
			if withoutCRDs(t, header) {
				args = []string{"check"}
			}
			args = append(args, "-f", file)
			for _, c := range header["config"] {
				args = append(args, "--config", filepath.Join(filepath.Dir(file), c))
			}
			_, out, errOut := runCLI(t, "", append(args, "-o", "json")...)
			require.Empty(t, errOut)
			var report check.Report
			require.NoError(t, json.Unmarshal([]byte(out), &report), out)
			var got []string
			for _, r := range report.Results {
				got = append(got, verdictLine(r))
			}
			assert.Equal(t, header["expect"], got, "check's verdicts")

			explainArgs := append([]string{"explain"}, args[1:]...)
			code, out, errOut := runCLI(t, "", append(explainArgs, "-o", "json")...)
			require.Equal(t, 0, code, errOut)
			var explained struct {
				Policies []struct{ Kind, Namespace, Name, Status string }
			}
			require.NoError(t, json.Unmarshal([]byte(out), &explained), out)
			var statuses []string
			for _, p := range explained.Policies {
				statuses = append(statuses, p.Kind+" "+p.Namespace+"/"+p.Name+" "+p.Status)
			}
			assert.ElementsMatch(t, header["status"], statuses, "explain's statuses")

			_, text, _ := runCLI(t, "", args...)
			testkit.Golden(t, strings.TrimSuffix(file, ".yaml")+".golden", text)
		})
	}
}

// verdictLine is "ALLOWED Kind ns/name", with the reasons of its warnings, or "DENIED
// Kind ns/name Reason,...".
func verdictLine(r check.Result) string {
	line := r.Kind + " " + r.Namespace + "/" + r.Name
	reasons := []string{}
	add := func(reason string) {
		if len(reasons) == 0 || reasons[len(reasons)-1] != reason {
			reasons = append(reasons, reason)
		}
	}
	if !r.Allowed {
		for _, d := range r.Denials {
			add(d.Reason)
		}
		return "DENIED " + line + " " + strings.Join(reasons, ",")
	}
	for _, w := range r.Warnings {
		reason, _, _ := strings.Cut(w, ":")
		add(reason)
	}
	if len(reasons) == 0 {
		return "ALLOWED " + line
	}
	return "ALLOWED " + line + " " + strings.Join(reasons, ",")
}

// withoutCRDs says the scenario is judged as `webhook check` judges manifests given without
// their CRDs (`# crds: none`): by the kind rows alone, as the API server's CEL rules do not
// run. Such a scenario shows a rule the row holds for the offline door.
func withoutCRDs(t *testing.T, header map[string][]string) bool {
	t.Helper()
	switch v := header["crds"]; {
	case len(v) == 0:
		return false
	case len(v) == 1 && v[0] == "none":
		return true
	default:
		t.Fatalf("# crds: %v: the only value is none", v)
		return false
	}
}

// corpusHeader reads the leading `# key: value` comment lines of a scenario.
func corpusHeader(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ": "); ok && !strings.Contains(key, " ") {
			out[key] = append(out[key], strings.TrimSpace(value))
		}
	}
	require.NoError(t, s.Err())
	return out
}
