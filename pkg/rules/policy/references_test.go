package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// ObjectRefs decodes each reference field as its shape says: a NameNamespace reference has
// the kind of its field whatever it spells (the API server prunes a group or kind written
// in it), and a reference's group is read as the row's implementation reads it (NGINX
// Gateway Fabric's "core" is the core group).
func TestObjectRefsByShape(t *testing.T) {
	table := kinds.BuiltinKindTable()
	type ref struct {
		Group, Kind, Name, Namespace string
		HasNamespace                 bool
		Path                         string
	}
	cases := map[string]struct {
		doc  string
		want []ref
	}{
		"APPolicy reference: name and namespace, kind of its own": {
			doc: `
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: waf, namespace: ns1}
spec:
  type: PLM
  policyRef: {apPolicyRef: {name: ap, namespace: security, kind: Secret, group: ""}}
  securityLogs:
  - logRef: {apLogConfRef: {name: log}}`,
			want: []ref{
				{Group: "appprotect.f5.com", Kind: "APPolicy", Name: "ap", Namespace: "security", HasNamespace: true, Path: "spec.policyRef.apPolicyRef"},
				{Group: "appprotect.f5.com", Kind: "APLogConf", Name: "log", Path: "spec.securityLogs[0].logRef.apLogConfRef"},
			},
		},
		"backend spelling the core group core": {
			doc: `
apiVersion: gateway.nginx.org/v1alpha1
kind: PayloadProcessor
metadata: {name: pp, namespace: ns1}
spec:
  processors:
  - type: ExtProcess
    extProcess: {backendRef: {group: core, kind: Service, name: ext, namespace: ns2, port: 9000}}`,
			want: []ref{{Group: "", Kind: "Service", Name: "ext", Namespace: "ns2", HasNamespace: true, Path: "spec.processors[0].extProcess.backendRef"}},
		},
		"header Secrets in request and response": {
			doc: `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: tp, namespace: app}
spec:
  headerModifiers:
    request: {add: [{name: a, value: b}, {secretRef: {name: keys, key: k}}]}
    response: {set: [{name: c, secretRef: {name: other, namespace: secrets}}]}`,
			want: []ref{
				{Kind: "Secret", Name: "keys", Path: "spec.headerModifiers.request.add[1].secretRef"},
				{Kind: "Secret", Name: "other", Namespace: "secrets", HasNamespace: true, Path: "spec.headerModifiers.response.set[0].secretRef"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refs, errs := policyOf(t, table, tc.doc).ObjectRefs()
			assert.Equal(t, field.ErrorList(nil), errs)
			got := []ref{}
			for _, r := range refs {
				got = append(got, ref{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace, HasNamespace: r.HasNamespace, Path: r.Path.String()})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
