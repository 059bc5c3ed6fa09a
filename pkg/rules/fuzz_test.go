package rules_test

import (
	"encoding/json"
	"testing"

	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// FuzzEvaluate decodes arbitrary policy JSON for every built-in kind and judges it against
// a small snapshot: it never crashes, and every denial carries a stable reason.
func FuzzEvaluate(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"p","namespace":"app"},"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw","namespace":"infra","sectionName":"https"}],"overrides":{"strategy":"patch","colors":{"light":"red"}}}}`,
		`{"metadata":{"name":"p","namespace":"app"},"spec":{"targetRef":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r1"},"defaults":{"strategy":"merge","limits":{"a":{}}},"remove":["a"]}}`,
		`{"metadata":{"name":"p"},"spec":{"targetRefs":[{"group":"","kind":"Service","name":"b1","sectionName":"https"},{"group":"","kind":"Service","name":"b1"}],"validation":{"caCertificateRefs":[{"kind":"ConfigMap","name":"ca"},"x"]}}}`,
		`{"spec":{"targetRefs":[null,1,"x",{"group":1,"kind":{},"name":[]}],"strategy":{},"defaults":[],"overrides":"x","issuerRef":7}}`,
		`{"metadata":{"creationTimestamp":"not a time"},"spec":null}`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	table := kinds.BuiltinKindTable()
	snap := index.New()
	for _, doc := range []string{
		`{"metadata":{"name":"gw","namespace":"infra"},"spec":{"gatewayClassName":"x","listeners":[{"name":"https","protocol":"HTTPS","port":443,"allowedRoutes":{"namespaces":{"from":"All"}}}]}}`,
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(doc), &m)
		snap.AddObject(topology.NewObject(kinds.GatewayGroup, "Gateway", m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		for _, row := range table.Rows() {
			p := policy.NewPolicy(row, obj)
			v := rules.Evaluate(rules.Request{Operation: rules.Create, Policy: p}, snap)
			for _, e := range v.Denials {
				if validation.ReasonOf(e) == "" {
					t.Fatalf("%s: denial without a reason: %v", row.Kind, e)
				}
			}
			_ = impact.Of(topology.WithPolicy(snap, p), p, nil)
		}
	})
}
