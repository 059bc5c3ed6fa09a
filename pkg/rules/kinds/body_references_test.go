package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A config file's references and conflict keys are checked when it loads: a file that
// cannot work fails loudly and adds nothing.
func TestLoadReferencesAndConflictKeys(t *testing.T) {
	cases := map[string]struct {
		config  string
		wantErr string
	}{
		"grant modes of an implementation with modes": {
			config: `
implementations:
- name: example
  controllerNames: [example.com/gateway]
  referenceGrants: {modes: [Loose, Strict], mode: Loose, modeSetting: EXAMPLE_GRANTS}
kinds:
- group: a.io
  kind: P
  class: Direct
  implementations: [example]
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: auth.secretRef, shape: NameNamespace, defaultKind: Secret, namespaced: true, grantModes: [Strict]}
  - {path: key.secretRef, defaultKind: Secret, namespaced: true, crossNamespace: ignored}
  conflicts:
    mode: key
    key: {field: sink, pattern: "^([a-z]+):", name: sink type}`,
		},
		"bad shape, crossNamespace, grantModes and key": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: a, shape: NameAndNamespace, defaultKind: Secret, namespaced: true}
  - {path: b, shape: NameNamespace, namespaced: true}
  - {path: c, defaultKind: Secret, namespaced: true, crossNamespace: sometimes}
  - {path: d, defaultKind: Secret, crossNamespace: free}
  - {path: e, defaultKind: Secret, namespaced: true, crossNamespace: ignored, grantModes: [Strict]}
  conflicts: {mode: key}`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: reference a shape "NameAndNamespace" must be ObjectReference, IssuerReference or NameNamespace; reference b of shape NameNamespace must say its kind (defaultKind); reference c crossNamespace "sometimes" must be grant, free or ignored; reference d: crossNamespace applies to a namespaced reference; reference e: grantModes apply to crossNamespace grant only; conflicts.key must be set with conflicts.mode key, and only then`,
		},
		"key pattern without a group": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  conflicts:
    mode: key
    key: {field: sink, pattern: "^[a-z]+:", name: sink type}`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: conflicts.key.pattern "^[a-z]+:" must have a capturing group`,
		},
		"key outside mode key, and without a name": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  conflicts:
    mode: none
    key: {field: sink}`,
			wantErr: `cfg.yaml: kinds[0]: kind a.io/P: conflicts.key must be set with conflicts.mode key, and only then`,
		},
		"grant modes of a row without implementations": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: a, defaultKind: Secret, namespaced: true, grantModes: [Strict]}`,
			wantErr: `cfg.yaml: kinds[0]: reference a: grantModes need implementations whose referenceGrants have modes`,
		},
		"grant modes the implementation does not have": {
			config: `
kinds:
- group: a.io
  kind: P
  class: Direct
  implementations: [kgateway, envoy-gateway]
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: a, defaultKind: Secret, namespaced: true, grantModes: [STRICT, Strict]}`,
			wantErr: `cfg.yaml: kinds[0]: reference a: grant mode "Strict" is not one of implementation "kgateway"'s (OFF, PERMISSIVE, STRICT); reference a: grantModes need referenceGrants.modes on implementation "envoy-gateway"`,
		},
		"an implementation's mode outside its modes": {
			config: `
implementations:
- name: example
  controllerNames: [example.com/gateway]
  referenceGrants: {modes: [Loose, Strict], mode: Medium}
kinds:
- group: a.io
  kind: P
  class: Direct
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]`,
			wantErr: `cfg.yaml: implementations[0]: implementation "example": referenceGrants.mode "Medium" must be one of referenceGrants.modes (Loose, Strict)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := BuiltinKindTable()
			err := table.Load([]byte(tc.config), "cfg.yaml")
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Len(t, table.Rows(), len(BuiltinKindTable().Rows()), "a bad file adds nothing")
				return
			}
			require.NoError(t, err)
			row := mustRow(t, table, "a.io", "P")
			assert.Equal(t, []bool{false, false}, []bool{row.GrantNeeded(&row.References[0]), row.GrantNeeded(&row.References[1])},
				"a grant in mode Strict only, where the implementation runs Loose; none where the namespace is ignored")
			assert.Equal(t, "", row.GrantMode(&row.References[1]))
		})
	}
}

// GrantNeeded says whether a reference into another namespace needs a grant: in every mode,
// in the mode every implementation of the row runs, or never (free, ignored).
func TestGrantNeeded(t *testing.T) {
	tableIn := func(t *testing.T, mode string) *KindTable {
		t.Helper()
		table := BuiltinKindTable()
		require.NoError(t, table.Load([]byte(`
implementations:
- name: one
  controllerNames: [example.com/one]
  referenceGrants: {modes: [Loose, Strict], mode: `+mode+`, modeSetting: ONE_GRANTS}
- name: two
  controllerNames: [example.com/two]
  referenceGrants: {modes: [Loose, Strict], mode: Strict}
kinds:
- group: a.io
  kind: One
  class: Direct
  implementations: [one]
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: always, defaultKind: Secret, namespaced: true}
  - {path: strict, defaultKind: Secret, namespaced: true, grantModes: [Strict]}
  - {path: free, defaultKind: Secret, namespaced: true, crossNamespace: free}
- group: a.io
  kind: Both
  class: Direct
  implementations: [one, two]
  targets: [{group: gateway.networking.k8s.io, kind: Gateway}]
  references:
  - {path: strict, defaultKind: Secret, namespaced: true, grantModes: [Strict]}`), "cfg.yaml"))
		return table
	}
	type got struct {
		Always, Strict, Free, Both bool
		Mode, BothMode             string
	}
	for mode, want := range map[string]got{
		"Loose":  {Always: true, BothMode: "one's reference grant mode Loose (ONE_GRANTS) and two's reference grant mode Strict", Mode: "one's reference grant mode Loose (ONE_GRANTS)"},
		"Strict": {Always: true, Strict: true, Both: true, Mode: "one's reference grant mode Strict (ONE_GRANTS)", BothMode: "one's reference grant mode Strict (ONE_GRANTS) and two's reference grant mode Strict"},
	} {
		t.Run(mode, func(t *testing.T) {
			table := tableIn(t, mode)
			one, both := mustRow(t, table, "a.io", "One"), mustRow(t, table, "a.io", "Both")
			assert.Equal(t, want, got{
				Always: one.GrantNeeded(&one.References[0]),
				Strict: one.GrantNeeded(&one.References[1]),
				Free:   one.GrantNeeded(&one.References[2]),
				Both:   both.GrantNeeded(&both.References[0]),
				Mode:   one.GrantMode(&one.References[1]),
				// A denial must hold for every implementation: Both needs a grant only where
				// each of its two runs Strict.
				BothMode: both.GrantMode(&both.References[0]),
			})
		})
	}
}

// A policy's conflict key is the part of its field the pattern's group captures; none where
// the field is absent, not a string, or not matched.
func TestConflictKeyOf(t *testing.T) {
	arn := &ConflictKey{Field: "destinationArn", Pattern: "^arn:[^:]+:([^:]+):", Name: "destination type"}
	require.NoError(t, arn.compile())
	nested := &ConflictKey{Field: "sink.kind", Name: "sink kind"}
	require.NoError(t, nested.compile())
	type result struct {
		Key string
		OK  bool
	}
	cases := map[string]struct {
		key  *ConflictKey
		spec map[string]any
		want result
	}{
		"S3 bucket":          {key: arn, spec: map[string]any{"destinationArn": "arn:aws:s3:::bucket"}, want: result{"s3", true}},
		"CloudWatch Logs":    {key: arn, spec: map[string]any{"destinationArn": "arn:aws:logs:us-west-2:1:log-group:g"}, want: result{"logs", true}},
		"GovCloud Firehose":  {key: arn, spec: map[string]any{"destinationArn": "arn:aws-us-gov:firehose:us-gov-west-1:1:deliverystream/s"}, want: result{"firehose", true}},
		"not an ARN":         {key: arn, spec: map[string]any{"destinationArn": "s3://bucket"}},
		"absent":             {key: arn, spec: map[string]any{}},
		"not a string":       {key: arn, spec: map[string]any{"destinationArn": int64(3)}},
		"whole nested value": {key: nested, spec: map[string]any{"sink": map[string]any{"kind": "kafka"}}, want: result{"kafka", true}},
		"nested under a list": {
			key:  nested,
			spec: map[string]any{"sink": []any{map[string]any{"kind": "kafka"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key, ok := tc.key.Of(tc.spec)
			assert.Equal(t, tc.want, result{key, ok})
		})
	}
}
