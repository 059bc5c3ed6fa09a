package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// runCLI runs the binary's entry point in-process.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheckExamples(t *testing.T) {
	code, out, errOut := runCLI(t, "", "check", "-f", "../../examples", "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))

	type verdict struct {
		name, op string
		allowed  bool
		reasons  []string
	}
	var got []verdict
	for _, r := range report.Results {
		v := verdict{name: r.Kind + " " + r.Namespace + "/" + r.Name, op: r.Operation, allowed: r.Allowed}
		for _, d := range r.Denials {
			v.reasons = append(v.reasons, d.Reason+" "+d.Field)
		}
		got = append(got, v)
	}
	assert.Equal(t, []verdict{
		{"ColorPolicy infra/gw-defaults", "CREATE", true, nil},
		{"ColorPolicy app/store-blue", "CREATE", true, nil},
		{"ColorPolicy app/bad-refs", "CREATE", false, []string{"InvalidTargetRef spec.targetRefs[0].group", "InvalidTargetRef spec.targetRefs[1].kind"}},
		{"ColorPolicy app/app-on-shared-gw", "CREATE", true, nil},
		{"ColorPolicy app/app-on-edge-gw", "CREATE", false, []string{"RefNotPermitted spec.targetRefs[0].namespace"}},
		{"ColorPolicy infra/both-ways", "CREATE", false, []string{"MultipleMergeStrategies spec.overrides", "MultipleMergeStrategies spec.overrides.strategy"}},
		{"BackendTLSPolicy app/store-tls", "CREATE", true, nil},
		{"BackendTLSPolicy app/store-tls-2", "CREATE", false, []string{"Conflicted spec.targetRefs[0]"}},
		{"ColorPolicy app/store-green", "CREATE", false, []string{"Conflicted spec"}},
		{"ColorPolicy app/not-yet", "CREATE", true, nil},
		{"ColorPolicy infra/no-such-listener", "CREATE", true, nil},
	}, got)
	assert.Equal(t, check.Summary{Allowed: 6, Denied: 5}, report.Summary)
	assert.Equal(t, check.Denial{
		Reason:  "RefNotPermitted",
		Field:   "spec.targetRefs[0].namespace",
		Message: `Forbidden: RefNotPermitted: no ReferenceGrant in namespace "edge" lets ColorPolicy from namespace "app" reference Gateway "edge"`,
	}, report.Results[4].Denials[0])
	assert.Equal(t, []string{`SectionNotFound: spec.targetRefs[0].sectionName: Gateway infra/gw has no listener named "grpc"; the policy takes effect once it does`}, report.Results[10].Warnings)
}

func TestCheckTextOutput(t *testing.T) {
	code, out, _ := runCLI(t, "", "check", "-f", "../../examples/00-topology.yaml", "-f", "../../examples/40-multiple-merge-strategies.yaml")
	assert.Equal(t, 1, code)
	assert.Equal(t, `DENIED  ColorPolicy infra/both-ways (CREATE, ../../examples/40-multiple-merge-strategies.yaml document 1)
    spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with `+"`defaults`"+`; a policy declares one merge strategy: use one of bare rules, `+"`defaults`, `overrides`"+`
    spec.overrides.strategy: Unsupported value: "merge": MultipleMergeStrategies: supported values: "atomic", "patch"
not checked: policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it
1 policies checked: 0 allowed, 1 denied
`, out)
}

const gatewayAndRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}
`

func TestCheckSequence(t *testing.T) {
	t.Run("same name again is an UPDATE, judged without its old self", func(t *testing.T) {
		dir := testkit.WriteFiles(t, map[string]string{"a.yaml": gatewayAndRoute + `---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: blue}
`})
		code, out, _ := runCLI(t, "", "check", "-f", dir, "-o", "json")
		require.Equal(t, 0, code)
		var report check.Report
		require.NoError(t, json.Unmarshal([]byte(out), &report))
		require.Len(t, report.Results, 2)
		assert.Equal(t, "CREATE", report.Results[0].Operation)
		assert.Equal(t, "UPDATE", report.Results[1].Operation)
		assert.Equal(t, "default", report.Results[1].Namespace, "namespace defaults to default")
	})
	t.Run("a denied policy is not added, so the next one does not conflict with it", func(t *testing.T) {
		dir := testkit.WriteFiles(t, map[string]string{"a.yaml": gatewayAndRoute + `---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: bad}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], defaults: {color: red}, overrides: {color: red}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: good}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], defaults: {color: blue}}
`})
		code, out, _ := runCLI(t, "", "check", "-f", dir)
		assert.Equal(t, 1, code)
		assert.Equal(t, strings.Join([]string{
			"DENIED  ColorPolicy default/bad (CREATE, " + dir + "/a.yaml document 2)",
			"    spec.overrides: Forbidden: MultipleMergeStrategies: may not be set together with `defaults`; a policy declares one merge strategy: use one of bare rules, `defaults`, `overrides`",
			"ALLOWED ColorPolicy default/good (CREATE, " + dir + "/a.yaml document 3)",
			"    impact: Atomic defaults on Gateway default/gw: reaches no paths yet (predicted at admission)",
			"not checked: policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it",
			"2 policies checked: 1 allowed, 1 denied",
		}, "\n")+"\n", out)
	})
	t.Run("a CRD labelled as a policy is discovered; List items are expanded", func(t *testing.T) {
		dir := testkit.WriteFiles(t, map[string]string{"a.yaml": `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: List
items:
- apiVersion: example.com/v1
  kind: RetryPolicy
  metadata: {name: one}
  spec: {targetRefs: [{group: "", kind: Service, name: svc}], retries: 3}
- apiVersion: example.com/v1
  kind: RetryPolicy
  metadata: {name: two}
  spec: {targetRefs: [{group: "", kind: Service, name: svc}], retries: 5}
`})
		code, out, _ := runCLI(t, "", "check", "-f", dir, "-o", "json")
		require.Equal(t, 1, code)
		var report check.Report
		require.NoError(t, json.Unmarshal([]byte(out), &report))
		require.Len(t, report.Results, 2)
		assert.True(t, report.Results[0].Allowed)
		// Judged by value, as every kind known only from its label (README: Built-in policy kinds).
		assert.Equal(t, []check.Denial{{Reason: "Conflicted", Field: "spec.retries",
			Message: `Forbidden: Conflicted: RetryPolicy default/one on Service default/svc also sets defaults "retries" to 3 (this policy: 5); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`}},
			report.Results[1].Denials)
	})
	t.Run("explicit creationTimestamps decide GEP-713 order; missing ones follow document order", func(t *testing.T) {
		dir := testkit.WriteFiles(t, map[string]string{"a.yaml": `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: b, port: 80}]}]}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p1, creationTimestamp: "2030-01-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], overrides: {color: red}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p2}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], overrides: {color: blue}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p3}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], defaults: {color: blue}}
---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p4}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], defaults: {color: green}}
`})
		_, out, _ := runCLI(t, "", "check", "-f", dir, "-o", "json")
		var report check.Report
		require.NoError(t, json.Unmarshal([]byte(out), &report))
		require.Len(t, report.Results, 4)
		observed := func(r check.Result) string {
			var im impact.Impact
			require.NoError(t, json.Unmarshal([]byte(r.Annotations[impact.AnnotationImpact]), &im))
			return im.ObservedAt
		}
		// observedAt is the newest creationTimestamp among the other policies a prediction
		// rests on, and check judges each document against those before it.
		assert.Equal(t, "", observed(report.Results[0]), "p1 is judged alone")
		assert.Equal(t, []check.Denial{{Reason: "Conflicted", Field: "spec.overrides",
			Message: `Forbidden: Conflicted: ColorPolicy default/p1 on Gateway default/gw also sets atomic overrides to {"color":"red"} (this policy: {"color":"blue"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`}},
			report.Results[1].Denials)
		assert.Equal(t, "2030-01-01T00:00:00Z", observed(report.Results[2]), "p3 is overridden by p1, whose explicit creationTimestamp is kept")
		// p1's overrides beat p4's defaults, so p4 overrides nothing; missing timestamps are
		// seen in the explain goldens (2024-01-01T00:00:NNZ, one second per document).
		assert.Equal(t, "2030-01-01T00:00:00Z", observed(report.Results[3]), "p4 is overridden by p1")
	})
}

func TestCheckBadInput(t *testing.T) {
	big := strings.Repeat("# padding\n", 1<<20) // 10 MiB
	cases := map[string]struct {
		files   map[string]string
		args    []string
		wantErr string
	}{
		"unparsable YAML": {
			files:   map[string]string{"a.yaml": "apiVersion: v1\nkind: Service\n---\nkind: [unclosed\n"},
			wantErr: "webhook check: DIR/a.yaml document 2: not valid YAML or JSON: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'\n",
		},
		"document with no kind": {
			files:   map[string]string{"a.yaml": "apiVersion: v1\nmetadata: {name: x}\n"},
			wantErr: "webhook check: DIR/a.yaml document 1: no `kind`; every object needs `apiVersion` and `kind`\n",
		},
		"unknown apiVersion for a known policy kind": {
			files:   map[string]string{"a.yaml": "apiVersion: kuadrant.io/v9\nkind: AuthPolicy\nmetadata: {name: x}\n"},
			wantErr: "webhook check: DIR/a.yaml document 1: AuthPolicy is not served at kuadrant.io/v9; known versions: v1\n",
		},
		"unknown apiVersion for a Gateway API kind": {
			files:   map[string]string{"a.yaml": "apiVersion: gateway.networking.k8s.io/v9\nkind: Gateway\nmetadata: {name: x}\n"},
			wantErr: "webhook check: DIR/a.yaml document 1: unknown apiVersion \"gateway.networking.k8s.io/v9\" for Gateway\n",
		},
		"a 10 MB file": {
			files:   map[string]string{"big.yaml": big},
			wantErr: "webhook check: DIR/big.yaml: larger than the 4 MiB limit for one file; split it into smaller files\n",
		},
		"an empty folder": {
			files:   map[string]string{"notes.txt": "not a manifest"},
			wantErr: "webhook check: DIR: no .yaml, .yml or .json files in this folder\n",
		},
		"a missing path": {
			args:    []string{"check", "-f", "DIR/nope.yaml"},
			wantErr: "webhook check: DIR/nope.yaml: no such file or directory\n",
		},
		"no -f": {
			args:    []string{"check"},
			wantErr: "webhook check: no input: pass -f with a file or folder (repeatable), -f - for standard input, or -k with a kustomization folder\n",
		},
		"manifests only in subfolders, without -R": {
			files:   map[string]string{"infra/a.yaml": gatewayAndRoute},
			wantErr: "webhook check: DIR: no .yaml, .yml or .json files in this folder, only in its subfolders: add -R to read them\n",
		},
		"-f and -k": {
			files:   map[string]string{"a.yaml": gatewayAndRoute},
			args:    []string{"check", "-f", "DIR/a.yaml", "-k", "DIR"},
			wantErr: "webhook check: give -f or -k, not both (as kubectl)\n",
		},
		"bad output format": {
			args:    []string{"check", "-f", "DIR", "-o", "xml"},
			wantErr: "webhook check: --output must be text, json, yaml, wide, sarif or junit, not \"xml\"\n",
		},
		"bad config file": {
			files:   map[string]string{"a.yaml": gatewayAndRoute, "cfg/kinds.yml.txt": "kinds: []"},
			args:    []string{"check", "-f", "DIR/a.yaml", "--config", "DIR/cfg/kinds.yml.txt"},
			wantErr: "webhook check: --config: DIR/cfg/kinds.yml.txt: nothing configured; expected `kinds`, `implementations`, `enforcement`, `messages`, `skipLabel` or `targetDeletions`\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := testkit.WriteFiles(t, tc.files)
			args := tc.args
			if args == nil {
				args = []string{"check", "-f", "DIR"}
			}
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "DIR", dir)
			}
			code, out, errOut := runCLI(t, "", args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, strings.ReplaceAll(tc.wantErr, "DIR", dir), errOut)
		})
	}
}

func TestCheckStdinAndConfig(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"kinds.yaml": `
kinds:
- group: policies.controller.io
  kind: ColorPolicy
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
`})
	policy := gatewayAndRoute + `---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}], color: red}
`
	code, out, _ := runCLI(t, policy, "check", "-f", "-", "--config", filepath.Join(dir, "kinds.yaml"))
	assert.Equal(t, 1, code)
	assert.Equal(t, "DENIED  ColorPolicy default/p (CREATE, - document 2)\n"+
		"    spec.targetRefs[0].sectionName: Forbidden: InvalidTargetRef: not supported when ColorPolicy targets Gateway; remove `sectionName` to target the whole object\n"+
		"not checked: policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it\n"+
		"1 policies checked: 0 allowed, 1 denied\n", out)
	code, _, _ = runCLI(t, policy, "check", "-f", "-")
	assert.Equal(t, 0, code, "the built-in ColorPolicy allows listener sections")
}

func TestHelpAndUnknownCommand(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Judge the policies in manifests, as the API server would admit them")
	code, _, errOut := runCLI(t, "", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `webhook: unknown command "frobnicate"`)
	code, out, _ = runCLI(t, "", "check", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Usage:\n  webhook check (-f PATH")
	code, out, errOut = runCLI(t, "")
	assert.Equal(t, 2, code, "no command")
	assert.Empty(t, out)
	assert.Contains(t, errOut, "Available Commands:")
}

// TestWrongCommandLines: a misspelt flag, a missing value or a stray argument says what was
// wrong and shows the command's usage on stderr, exit 2: in a Deployment, a typo in the args
// is a log line, not a silent CrashLoopBackOff.
func TestWrongCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--outptu", "json"}, "webhook check: unknown flag: --outptu\n\nUsage:\n  webhook check (-f PATH"},
		{[]string{"serve", "--port"}, "webhook serve: flag needs an argument: --port\n\nUsage:\n  webhook serve"},
		{[]string{"serve", "--port", "https"}, "webhook serve: invalid argument \"https\" for \"--port\" flag"},
		{[]string{"explain", "stray"}, "webhook explain: target \"stray\": unknown kind \"stray\"; one of "},
		{[]string{"audit", "stray"}, "webhook audit: unknown command \"stray\" for \"webhook audit\"\n\nUsage:\n  webhook audit"},
		{[]string{"version", "--bogus"}, "webhook version: unknown flag: --bogus"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.True(t, strings.HasPrefix(errOut, tc.want), "%v:\n%s", tc.args, errOut)
	}
}

// TestReadmeExampleIsReal keeps the README's sample output equal to what the binary prints.
func TestReadmeExampleIsReal(t *testing.T) {
	t.Chdir("../..")
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	const marker = "The output of `webhook check -f examples`"
	i := strings.Index(string(readme), marker)
	require.NotEqual(t, -1, i, "README lost its example section")
	rest := string(readme)[i:]
	start := strings.Index(rest, "```\n") + len("```\n")
	end := strings.Index(rest[start:], "```")
	_, out, _ := runCLI(t, "", "check", "-f", "examples")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		updated := string(readme)[:i] + rest[:start] + out + rest[start+end:]
		require.NoError(t, os.WriteFile("README.md", []byte(updated), 0o644))
		return
	}
	assert.Equal(t, out, rest[start:start+end], "README example is stale; run make update-golden")
}

func TestCheckEnforcementModes(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"rollout.yaml": `
enforcement:
  default: Warn
  rules:
  - {mode: Deny, reasons: [MultipleMergeStrategies]}
  - {mode: DryRun, kinds: [BackendTLSPolicy]}
`})
	args := []string{"check", "-f", "../../examples/00-topology.yaml", "-f", "../../examples/10-accepted.yaml", "-f", "../../examples/40-multiple-merge-strategies.yaml",
		"-f", "../../examples/50-conflicted.yaml", "--config", filepath.Join(dir, "rollout.yaml")}

	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, 1, code, errOut)
	lines := strings.Split(out, "\n")
	assert.Equal(t, "enforcement: default: Warn; Deny: reasons MultipleMergeStrategies; DryRun: kinds BackendTLSPolicy", lines[0])
	assert.Contains(t, out, "DENIED  ColorPolicy infra/both-ways")
	assert.Contains(t, out, "ALLOWED BackendTLSPolicy app/store-tls-2")
	assert.Contains(t, out, "    DryRun, would deny: spec.targetRefs[0]: Forbidden: Conflicted: Service app/store section https already has BackendTLSPolicy app/store-tls;")
	assert.Contains(t, out, "ALLOWED ColorPolicy app/store-green")
	assert.Contains(t, out, "    warning: spec: Forbidden: Conflicted: ColorPolicy app/store-blue on HTTPRoute app/store also sets")
	assert.Contains(t, out, "(admitted: enforcement mode is Warn)")
	assert.True(t, strings.HasSuffix(out, "6 policies checked: 5 allowed (2 only because of Warn or DryRun enforcement), 1 denied\n"), out)
	golden(t, "testdata/check/enforcement-modes/out.txt", out) // every line, not only those above

	code, out, errOut = runCLI(t, "", append(args, "-o", "json")...)
	require.Equal(t, 1, code, errOut)
	golden(t, "testdata/check/enforcement-modes/out.json", out)
	var report check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, check.Summary{Allowed: 5, Denied: 1, Relaxed: 2}, report.Summary)
	byName := map[string]check.Result{}
	for _, r := range report.Results {
		byName[r.Name] = r
	}
	require.Len(t, byName["store-tls-2"].Relaxed, 1)
	assert.Equal(t, "DryRun", byName["store-tls-2"].Relaxed[0].Mode)
	assert.Equal(t, "Conflicted", byName["store-tls-2"].Relaxed[0].Reason)
	assert.Empty(t, byName["store-tls-2"].Warnings, "DryRun admits silently")
	require.Len(t, byName["store-green"].Relaxed, 1)
	assert.Equal(t, "Warn", byName["store-green"].Relaxed[0].Mode)
	assert.Len(t, byName["store-green"].Warnings, 1)
	assert.NotEmpty(t, byName["store-green"].Annotations, "an admitted policy is annotated whatever its mode")
}

// TestCheckNamespaceFlag: -n puts the documents that name no namespace where `kubectl apply
// -n` would, so a policy lands beside its target there.
func TestCheckNamespaceFlag(t *testing.T) {
	dir := testkit.WriteFiles(t, map[string]string{"a.yaml": gatewayAndRoute + `---
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: p}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], color: red}
`})
	code, out, errOut := runCLI(t, "", "check", "-f", dir, "-n", "team-a")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "ALLOWED ColorPolicy team-a/p (CREATE, "+filepath.Join(dir, "a.yaml")+" document 2)\n"+
		"    impact: Atomic defaults on Gateway team-a/gw: reaches no paths yet (predicted at admission)\n"+
		"not checked: policies.controller.io/ColorPolicy: no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; give its CRD with -f, or use --cluster to read it from a cluster that has it\n"+
		"1 policies checked: 1 allowed, 0 denied\n", out, "the Gateway is in team-a too: no TargetNotFound")
}
