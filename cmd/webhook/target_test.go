package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

const targetCase = "testdata/explain/route-attachment-target/in.yaml"

// TestExplainTargetAsKubectlNamesIt: explain takes its target as kubectl takes an object,
// KIND/NAME in -n's namespace, KIND NAME or KIND/NAMESPACE/NAME, and tells what --target
// tells; --target stays, alone or naming the same object as the argument.
func TestExplainTargetAsKubectlNamesIt(t *testing.T) {
	code, want, errOut := runCLI(t, "", "explain", "-f", targetCase, "--target", "HTTPRoute/team-a/selected")
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.HasPrefix(want, "Policies on the paths through HTTPRoute team-a/selected:\n"), want)
	for _, args := range [][]string{
		{"explain", "httproute/selected", "-n", "team-a", "-f", targetCase},
		{"explain", "-f", targetCase, "httproutes/team-a/selected"},
		{"explain", "httproute", "selected", "-n", "team-a", "-f", targetCase},
		{"explain", "HTTPRoute/selected", "-n", "team-a", "--target", "httproute/team-a/selected", "-f", targetCase},
	} {
		code, out, errOut := runCLI(t, "", args...)
		assert.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Empty(t, errOut, args)
		assert.Equal(t, want, out, args)
	}
}

// TestExplainTargetErrors: two targets, a target that does not parse, or an argument and a
// --target naming different objects say so on stderr, exit 2; a wrong argument is a wrong
// command line, followed by the usage.
func TestExplainTargetErrors(t *testing.T) {
	usage := "\n\nUsage:\n  webhook explain [KIND/NAME [-n NAMESPACE]]"
	for _, tc := range []struct {
		args []string
		want string // stderr, or its beginning when it ends with the usage
	}{
		{[]string{"httproute/a", "httproute/b"},
			`webhook explain: one target at a time (KIND/NAME), not "httproute/a httproute/b"` + usage},
		{[]string{"httproute", "a", "b"},
			`webhook explain: one target at a time (KIND/NAME), not "httproute a b"` + usage},
		{[]string{"stray"},
			`webhook explain: target "stray": unknown kind "stray"; one of `},
		{[]string{"httproute"},
			`webhook explain: target "httproute": use HTTPRoute/NAME (with -n NAMESPACE) or HTTPRoute/NAMESPACE/NAME` + usage},
		{[]string{"gatewayclass/a/b"},
			`webhook explain: target "gatewayclass/a/b": GatewayClass is cluster-scoped; use GatewayClass/NAME` + usage},
		{[]string{"httproute/selected", "-n", "team-a", "--target", "gateway/infra/gw"},
			"webhook explain: two targets, HTTPRoute team-a/selected and --target Gateway infra/gw: give one\n"},
		{[]string{"httproute/selected", "--target", "httproute/selected", "-n", "team-a", "--namespace", "team-b"},
			""}, // the same object in the last -n's namespace
		{[]string{"httproute/team-a/selected", "--target", "httproute/selected"},
			"webhook explain: two targets, HTTPRoute team-a/selected and --target HTTPRoute default/selected: give one\n"},
		{[]string{"--target", "stray/x"},
			`webhook explain: --target: "stray/x": unknown kind "stray"; one of `},
	} {
		args := append([]string{"explain", "-f", targetCase}, tc.args...)
		code, out, errOut := runCLI(t, "", args...)
		if tc.want == "" {
			assert.Equal(t, 0, code, "%v: %s", tc.args, errOut)
			continue
		}
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, out, tc.args)
		if strings.HasSuffix(tc.want, "\n") {
			assert.Equal(t, tc.want, errOut, tc.args)
		} else {
			assert.True(t, strings.HasPrefix(errOut, tc.want), "%v:\n%s", tc.args, errOut)
		}
	}
	code, _, errOut := runCLI(t, "", "explain")
	assert.Equal(t, 2, code)
	assert.Equal(t, "webhook explain: give manifests (-f PATH), --cluster, or a target to read from the cluster (KIND/NAME)\n", errOut)

	// A target without manifests reads the cluster, as kubectl does: here none is reachable.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	code, _, errOut = runCLI(t, "", "explain", "httproute/store", "-n", "app", "--server", "https://127.0.0.1:1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "webhook explain: reading the cluster: ")
}

func TestExplainTarget(t *testing.T) {
	route := policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "app", Name: "store"}
	class := policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "GatewayClass", Name: "eg"}
	inApp := func() string { return "app" }
	for name, tc := range map[string]struct {
		args    []string
		flag    string
		want    *policy.TargetKey
		wantErr string
	}{
		"none":                        {},
		"KIND/NAME":                   {args: []string{"httproute/store"}, want: &route},
		"KIND NAME":                   {args: []string{"httproutes", "store"}, want: &route},
		"KIND/NAMESPACE/NAME":         {args: []string{"HTTPRoute/app/store"}, want: &route},
		"cluster-scoped KIND/NAME":    {args: []string{"gc/eg"}, want: &class},
		"--target alone":              {flag: "httproute/store", want: &route},
		"both, the same object":       {args: []string{"httproute/app/store"}, flag: "httproutes/store", want: &route},
		"both, different objects":     {args: []string{"httproute/store"}, flag: "gc/eg", wantErr: "two targets, HTTPRoute app/store and --target GatewayClass eg: give one"},
		"two targets":                 {args: []string{"httproute/store", "gc/eg"}, wantErr: `one target at a time (KIND/NAME), not "httproute/store gc/eg"`},
		"KIND NAME with a slash":      {args: []string{"httproute", "app/store"}, wantErr: `one target at a time (KIND/NAME), not "httproute app/store"`},
		"a kind without a name":       {args: []string{"gateway"}, wantErr: `target "gateway": use Gateway/NAME (with -n NAMESPACE) or Gateway/NAMESPACE/NAME`},
		"an empty name":               {args: []string{"gateway/"}, wantErr: `target "gateway/": use Gateway/NAME (with -n NAMESPACE) or Gateway/NAMESPACE/NAME`},
		"--target wrong, arg omitted": {flag: "gateway", wantErr: `--target: "gateway": use Gateway/NAME (with -n NAMESPACE) or Gateway/NAMESPACE/NAME`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := explainTarget(tc.args, tc.flag, inApp)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
