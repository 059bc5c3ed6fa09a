package check

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// colorCRD is a ColorPolicy CRD whose schema keeps every field: what it applies changes no
// verdict, so the cases below differ only in whether it was given.
const colorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.policies.controller.io}
spec:
  group: policies.controller.io
  scope: Namespaced
  names: {kind: ColorPolicy, plural: colorpolicies}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const storeTLS = `
apiVersion: v1
kind: Service
metadata: {name: store, namespace: app}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: store-tls, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: store}]
  validation: {hostname: store.example.com, wellKnownCACertificates: System}
`

// TestNotChecked: each door (check's Run, --cluster's RunOnto, --diff's Diff) names once
// each kind of the policies it judged without a CRD, among the manifests or the stored
// state (the cluster's CRDs); a stored policy outside the change set is not check's to
// name.
func TestNotChecked(t *testing.T) {
	colorNote := NotChecked{Kind: "policies.controller.io/ColorPolicy", Message: notCheckedMessage}
	tlsNote := NotChecked{Kind: "gateway.networking.k8s.io/BackendTLSPolicy", Message: notCheckedMessage}
	twoColors := []string{colorPolicy("store-blue", onStore, "{color: blue}"), colorPolicy("gw-blue", onGw, "{color: blue}")}
	type run func(stored, docs []manifests.Document) ([]NotChecked, error)
	check := func(_, docs []manifests.Document) ([]NotChecked, error) {
		r, err := Run(docs, kinds.BuiltinKindTable(), nil)
		if err != nil {
			return nil, err
		}
		return r.NotChecked, nil
	}
	onto := func(stored, docs []manifests.Document) ([]NotChecked, error) {
		r, err := RunOnto(stored, docs, kinds.BuiltinKindTable(), nil, "default")
		if err != nil {
			return nil, err
		}
		return r.NotChecked, nil
	}
	diff := func(stored, docs []manifests.Document) ([]NotChecked, error) {
		r, err := Diff(stored, docs, kinds.BuiltinKindTable(), nil, "default")
		if err != nil {
			return nil, err
		}
		return r.NotChecked, nil
	}
	for name, tc := range map[string]struct {
		run          run
		stored, docs []string
		want         []NotChecked
	}{
		"check: two policies of a kind, one note": {run: check, docs: append([]string{diffTopology, storeTLS}, twoColors...),
			want: []NotChecked{tlsNote, colorNote}},
		"check: the CRD among the manifests, after its policies": {run: check, docs: append(append([]string{diffTopology}, twoColors...), colorCRD)},
		"check: a Gateway API kind is not exempt": {run: check, docs: append([]string{diffTopology, storeTLS, colorCRD}, twoColors...),
			want: []NotChecked{tlsNote}},
		"--cluster: the cluster's CRD": {run: onto, stored: []string{diffTopology, colorCRD}, docs: twoColors},
		"--cluster: the cluster has no CRD of it": {run: onto, stored: []string{diffTopology}, docs: twoColors,
			want: []NotChecked{colorNote}},
		"--diff: the stored state's CRD": {run: diff, stored: []string{diffTopology, colorCRD}, docs: twoColors},
		"--diff: no CRD":                 {run: diff, stored: []string{diffTopology}, docs: twoColors, want: []NotChecked{colorNote}},
		"--diff: a stored policy outside the change set is not named": {run: diff, stored: []string{diffTopology, storeTLS}, docs: twoColors,
			want: []NotChecked{colorNote}},
	} {
		t.Run(name, func(t *testing.T) {
			var stored []manifests.Document
			if tc.stored != nil {
				stored = decodeDocs(t, "cluster", tc.stored...)
			}
			got, err := tc.run(stored, decodeDocs(t, "pr.yaml", tc.docs...))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
