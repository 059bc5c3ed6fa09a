package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/testcrds"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// notCheckedDir holds two ColorPolicies and a BackendTLSPolicy, all allowed, and check's
// whole outputs (text and JSON) for each set of CRDs given.
var notCheckedDir = filepath.Join("testdata", "check", "not-checked")

// TestCheckSaysWhatItDidNotCheck: a policy kind judged without its CRD is named once
// (not once per policy), in text above the counts and in JSON as notChecked, a Gateway
// API kind as any other; a kind whose CRD is given is not named; the exit code is the
// verdicts' alone.
func TestCheckSaysWhatItDidNotCheck(t *testing.T) {
	crds, err := testcrds.Files(context.Background(), filepath.Join("..", ".."))
	require.NoError(t, err)
	i := slices.IndexFunc(crds, func(f string) bool {
		return filepath.Base(f) == "gateway.networking.k8s.io_backendtlspolicies.yaml"
	})
	require.NotEqual(t, -1, i, "Gateway API's BackendTLSPolicy CRD")
	backendTLS := crds[i]
	colors := filepath.Join("..", "..", "test", "crds", "colorpolicies.yaml")
	note := func(kind string) check.NotChecked {
		return check.NotChecked{Kind: kind, Message: "no CustomResourceDefinition of it was given, so its schema, CEL rules and defaults were not applied; " +
			"give its CRD with -f, or use --cluster to read it from a cluster that has it"}
	}

	for _, tc := range []struct {
		name string
		crds []string
		want []check.NotChecked
	}{
		{"no-crds", nil, []check.NotChecked{note("policies.controller.io/ColorPolicy"), note("gateway.networking.k8s.io/BackendTLSPolicy")}},
		{"colorpolicy-crd", []string{colors}, []check.NotChecked{note("gateway.networking.k8s.io/BackendTLSPolicy")}},
		{"every-crd", []string{colors, backendTLS}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"check"}
			for _, crd := range tc.crds {
				args = append(args, "-f", crd)
			}
			args = append(args, "-f", filepath.Join(notCheckedDir, "in.yaml"))

			code, out, errOut := runCLI(t, "", args...)
			require.Equal(t, 0, code, errOut+out)
			testkit.Golden(t, filepath.Join(notCheckedDir, tc.name+".txt"), out)

			code, out, errOut = runCLI(t, "", append(args, "-o", "json")...)
			require.Equal(t, 0, code, errOut+out)
			testkit.Golden(t, filepath.Join(notCheckedDir, tc.name+".json"), out)
			var report check.Report
			require.NoError(t, json.Unmarshal([]byte(out), &report))
			assert.Equal(t, tc.want, report.NotChecked)
			assert.Equal(t, check.Summary{Allowed: 3}, report.Summary)
		})
	}
}
