package main

import (
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/test/harness/testkit"
)

// TestCheckForCI: -o sarif and -o junit over examples/, as golden files; both parse, and
// --fail-on-warning turns a run with warnings only into exit 1.
func TestCheckForCI(t *testing.T) {
	t.Chdir("../..")
	code, out, errOut := runCLI(t, "", "check", "-f", "examples", "-o", "sarif")
	require.Equal(t, 1, code, errOut)
	var sarif map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sarif))
	testkit.Golden(t, filepath.Join("cmd", "webhook", "testdata", "check", "ci", "examples.sarif"),
		strings.Replace(out, `"version": "`+buildVersion()+`"`, `"version": "VERSION"`, 1))

	code, out, errOut = runCLI(t, "", "check", "-f", "examples", "-o", "junit")
	require.Equal(t, 1, code, errOut)
	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &suites))
	assert.Equal(t, 11, suites.Suites[0].Tests)
	assert.Equal(t, 5, suites.Suites[0].Failures)
	testkit.Golden(t, filepath.Join("cmd", "webhook", "testdata", "check", "ci", "examples.junit.xml"), out)

	code, _, _ = runCLI(t, "", "check", "-f", "examples/60-warning.yaml", "-f", "examples/00-topology.yaml")
	assert.Equal(t, 0, code, "warnings alone pass")
	code, _, _ = runCLI(t, "", "check", "-f", "examples/60-warning.yaml", "-f", "examples/00-topology.yaml", "--fail-on-warning")
	assert.Equal(t, 1, code, "--fail-on-warning")
}

// TestAuditForCI: audit -o junit lists each finding as a failed test case at its file and
// document.
func TestAuditForCI(t *testing.T) {
	t.Chdir("../..")
	code, out, errOut := runCLI(t, "", "audit", "-f", "examples", "-o", "junit")
	require.Equal(t, 1, code, errOut)
	testkit.Golden(t, filepath.Join("cmd", "webhook", "testdata", "check", "ci", "examples-audit.junit.xml"), out)
	code, out, errOut = runCLI(t, "", "audit", "-f", "examples", "-o", "sarif")
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, out, `"uri": "examples/50-conflicted.yaml"`)
}
