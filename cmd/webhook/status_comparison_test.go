package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/check"
)

// audit and report read the statuses in the manifests and compare them with the
// prediction (pkg/check and pkg/reports hold the goldens): the doors pass them through,
// and -n narrows the disagreements reported. A disagreement alone does not change audit's
// exit code (findings do).
func TestAuditAndReportCompareStatuses(t *testing.T) {
	const eg = "../../testdata/status/envoy-gateway/in.yaml"
	code, out, errOut := runCLI(t, "", "audit", "-f", eg, "-o", "json")
	require.Equal(t, 1, code, errOut)
	var report check.AuditReport
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, check.AuditSummary{Policies: 6, Findings: 1, StatusesCompared: 8, Disagreements: 2}, report.Summary)

	code, out, errOut = runCLI(t, "", "audit", "-f", eg, "-n", "infra")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "DISAGREES ClientTrafficPolicy infra/gw-client [statusDiffers]\n"+
		"    Gateway infra/gw: predicted Enforced on 1 path; gateway.envoyproxy.io/gatewayclass-controller says Overridden=True (Overridden): There are existing ClientTrafficPolicies that are overriding these sections [http]\n"+
		"6 policies audited: 0 would be denied today\n"+
		"8 controller statuses compared with the prediction: 1 disagree\n", out)

	code, out, errOut = runCLI(t, "", "report", "-f", eg)
	require.Equal(t, 0, code, errOut)
	var predictions []string
	for _, doc := range strings.Split(out, "---\n")[1:] {
		var r struct {
			Metadata struct{ Namespace string }
			Results  []struct {
				Rule       string
				Properties map[string]string
				Resources  []struct{ Name string }
			}
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &r))
		for _, res := range r.Results {
			if res.Rule == "prediction" {
				predictions = append(predictions, r.Metadata.Namespace+"/"+res.Resources[0].Name+" "+res.Properties["class"])
			}
		}
	}
	assert.Equal(t, []string{"app/cart-auth refusedByController", "infra/gw-client statusDiffers"}, predictions)
}
