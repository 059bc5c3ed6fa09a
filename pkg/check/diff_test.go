package check

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// diffTopology is the stored objects every case starts from: Gateway infra/gw (listener
// http, routes from every namespace), HTTPRoute app/store to Service app/store.
const diffTopology = `
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: store, port: 80}]}]
`

// colorPolicy is a ColorPolicy document in app with one target reference (YAML flow
// style) and atomic defaults.
func colorPolicy(name, target, defaults string) string {
	return `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: ` + name + `, namespace: app}
spec:
  targetRefs: [` + target + `]
  defaults: ` + defaults + `
`
}

const (
	onStore = `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}`
	onCart  = `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: cart}`
	onGw    = `{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}`
)

const cartRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cart, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: cart, port: 80}]}]
`

const grant = `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: app-colors, namespace: infra}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: app}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]
`

// decodeDocs reads YAML documents joined by "---" as the file source.
func decodeDocs(t *testing.T, source string, parts ...string) []manifests.Document {
	t.Helper()
	var text string
	for _, p := range parts {
		text += "---\n" + p
	}
	docs, err := manifests.Decode(source, []byte(text))
	require.NoError(t, err)
	return docs
}

// seen is a finding as a test states it: its policy, origin, severity, reason and message.
type seen struct {
	Name, Origin, Severity, Reason, Field, Message, Mode string
}

func seenOf(list []DiffFinding) []seen {
	out := []seen{}
	for _, f := range list {
		out = append(out, seen{f.Name, f.Origin, f.Severity, f.Reason, f.Field, f.Message, f.Mode})
	}
	return out
}

const (
	conflictStore = `Forbidden: Conflicted: ColorPolicy app/store-blue on HTTPRoute app/store also sets atomic defaults to {"color":"blue"} (this policy: {"color":"green"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`
	conflictCart  = `Forbidden: Conflicted: ColorPolicy app/cart-blue on HTTPRoute app/cart also sets atomic defaults to {"color":"blue"} (this policy: {"color":"red"}); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level`
	cartNotFound  = `TargetNotFound: spec.targetRefs[0]: HTTPRoute app/cart not found; the policy takes effect once it exists`
	noGrant       = `Forbidden: RefNotPermitted: no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`
)

func TestDiffFindings(t *testing.T) {
	warnAll := &rules.Config{Enforcement: rules.Enforcement{Default: rules.Warn}}
	cases := map[string]struct {
		stored, changes []string
		config          *rules.Config
		introduced      []seen
		fixed           []seen
		unchanged       []seen
	}{
		"a new policy's denial is introduced": {
			stored:     []string{colorPolicy("store-blue", onStore, "{color: blue}")},
			changes:    []string{colorPolicy("store-green", onStore, "{color: green}")},
			introduced: []seen{{"store-green", OriginCheck, SeverityDenial, "Conflicted", "spec.defaults", conflictStore, ""}},
		},
		"an update that ends a conflict fixes it": {
			// store-green was stored while the webhook was down.
			stored:  []string{colorPolicy("store-blue", onStore, "{color: blue}"), colorPolicy("store-green", onStore, "{color: green}")},
			changes: []string{colorPolicy("store-green", onStore, "{color: blue}")},
			fixed:   []seen{{"store-green", OriginCheck, SeverityDenial, "Conflicted", "spec.defaults", conflictStore, ""}},
		},
		"a policy applied again keeps its warning": {
			stored:    []string{colorPolicy("cart-blue", onCart, "{color: blue}")},
			changes:   []string{colorPolicy("cart-blue", onCart, "{color: blue}")},
			unchanged: []seen{{"cart-blue", OriginCheck, SeverityWarning, "TargetNotFound", "", cartNotFound, ""}},
		},
		"a stored policy becomes conflicted when its target arrives": {
			stored:     []string{colorPolicy("cart-blue", onCart, "{color: blue}"), colorPolicy("cart-red", onCart, "{color: red}")},
			changes:    []string{cartRoute},
			introduced: []seen{{"cart-red", OriginAudit, SeverityDenial, "Conflicted", "spec.defaults", conflictCart, "Deny"}},
			fixed: []seen{
				{"cart-blue", OriginAudit, SeverityWarning, "TargetNotFound", "", cartNotFound, ""},
				{"cart-red", OriginAudit, SeverityWarning, "TargetNotFound", "", cartNotFound, ""},
			},
		},
		"a ReferenceGrant fixes a stored policy's reference": {
			stored:  []string{colorPolicy("on-gw", onGw, "{color: purple}")},
			changes: []string{grant},
			fixed:   []seen{{"on-gw", OriginAudit, SeverityDenial, "RefNotPermitted", "spec.targetRefs[0].namespace", noGrant, "Deny"}},
		},
		"a stored finding the change does not touch is not listed": {
			// cart-blue's warning stays, but nothing of cart-blue changes.
			stored:  []string{colorPolicy("cart-blue", onCart, "{color: blue}"), colorPolicy("store-blue", onStore, "{color: blue}")},
			changes: []string{colorPolicy("store-blue", onStore, "{color: teal}")},
		},
		"a stored finding of a policy the change affects is unchanged": {
			// gw-purple reaches the new route's path, and keeps its warning about gw2.
			stored:  []string{grant, colorPolicy("gw-purple", onGw+`, {group: gateway.networking.k8s.io, kind: Gateway, name: gw2, namespace: infra}`, "{color: purple}")},
			changes: []string{cartRoute},
			unchanged: []seen{{"gw-purple", OriginAudit, SeverityWarning, "TargetNotFound", "",
				"TargetNotFound: spec.targetRefs[1]: Gateway infra/gw2 not found; the policy takes effect once it exists", ""}},
		},
		"a denial Warn admits is one relaxed finding": {
			stored:     []string{colorPolicy("store-blue", onStore, "{color: blue}")},
			changes:    []string{colorPolicy("store-green", onStore, "{color: green}")},
			config:     warnAll,
			introduced: []seen{{"store-green", OriginCheck, SeverityRelaxed, "Conflicted", "spec.defaults", conflictStore, "Warn"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stored := decodeDocs(t, "cluster", append([]string{diffTopology}, tc.stored...)...)
			changes := decodeDocs(t, "pr.yaml", tc.changes...)
			r, err := Diff(stored, changes, kinds.BuiltinKindTable(), tc.config, "default")
			require.NoError(t, err)
			want := func(s []seen) []seen {
				if s == nil {
					return []seen{}
				}
				return s
			}
			assert.Equal(t, want(tc.introduced), seenOf(r.Introduced), "introduced")
			assert.Equal(t, want(tc.fixed), seenOf(r.Fixed), "fixed")
			assert.Equal(t, want(tc.unchanged), seenOf(r.Unchanged), "unchanged")
			assert.Equal(t, len(tc.introduced) > 0, r.Introduces())
			assert.Equal(t, DiffSummary{Allowed: r.Summary.Allowed, Denied: r.Summary.Denied,
				Introduced: len(tc.introduced), Fixed: len(tc.fixed), Unchanged: len(tc.unchanged),
				Paths: len(r.Paths), Policies: len(r.Policies)}, r.Summary)
		})
	}
}

// TestDiffFindingsOfTheChangeSetAreAtTheirDocument: a change set's finding names its
// document and operation on both sides; a stored policy's is laid, for SARIF, at the
// change set's document it targets.
func TestDiffFindingsOfTheChangeSetAreAtTheirDocument(t *testing.T) {
	stored := decodeDocs(t, "cluster", diffTopology, colorPolicy("store-blue", onStore, "{color: blue}"), colorPolicy("store-green", onStore, "{color: green}"),
		colorPolicy("cart-blue", onCart, "{color: blue}"), colorPolicy("cart-red", onCart, "{color: red}"))
	changes := decodeDocs(t, "pr.yaml", cartRoute, colorPolicy("store-green", onStore, "{color: blue}"))
	r, err := Diff(stored, changes, kinds.BuiltinKindTable(), nil, "default")
	require.NoError(t, err)
	require.Len(t, r.Fixed, 3)
	f := r.Fixed[0] // the change set's findings first, then the stored policies'
	assert.Equal(t, []any{"store-green", "UPDATE", "pr.yaml", 2}, []any{f.Name, f.Operation, f.File, f.Document})
	require.Len(t, r.Introduced, 1)
	assert.Equal(t, "cart-red", r.Introduced[0].Name)
	require.Len(t, r.Introduced[0].causes, 1)
	assert.Equal(t, "pr.yaml document 1", r.Introduced[0].causes[0].Where())
}

func TestDiffEffectiveSettings(t *testing.T) {
	path := func(service string) []string {
		return []string{"Gateway infra/gw", "Listener http", "HTTPRoute app/store", "Rule 0", "Service app/" + service}
	}
	t.Run("a value changes", func(t *testing.T) {
		stored := decodeDocs(t, "cluster", diffTopology, colorPolicy("store-blue", onStore, "{color: blue, size: 3}"))
		changes := decodeDocs(t, "pr.yaml", colorPolicy("store-blue", onStore, "{color: teal, size: 3.0}"))
		r, err := Diff(stored, changes, kinds.BuiltinKindTable(), nil, "default")
		require.NoError(t, err)
		assert.Equal(t, []PathChange{{
			Kind: "ColorPolicy", Path: path("store"),
			Before: &Effect{Effective: map[string]any{"color": "blue", "size": int64(3)}, Sources: map[string]string{"color": "app/store-blue", "size": "app/store-blue"}},
			After:  &Effect{Effective: map[string]any{"color": "teal", "size": int64(3)}, Sources: map[string]string{"color": "app/store-blue", "size": "app/store-blue"}},
			Settings: []SettingChange{{Name: "color",
				Before: &Setting{Value: "blue", Source: "app/store-blue"}, After: &Setting{Value: "teal", Source: "app/store-blue"}}},
		}}, r.Paths, "size is 3 on both sides, however written")
		assert.Empty(t, r.Policies)
	})
	t.Run("a path goes and another comes", func(t *testing.T) {
		stored := decodeDocs(t, "cluster", diffTopology, colorPolicy("store-blue", onStore, "{color: blue}"))
		changes := decodeDocs(t, "pr.yaml", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: store-v2, port: 80}]}]
`)
		r, err := Diff(stored, changes, kinds.BuiltinKindTable(), nil, "default")
		require.NoError(t, err)
		blue := &Setting{Value: "blue", Source: "app/store-blue"}
		effect := &Effect{Effective: map[string]any{"color": "blue"}, Sources: map[string]string{"color": "app/store-blue"}}
		assert.Equal(t, []PathChange{
			{Kind: "ColorPolicy", Path: path("store"), Before: effect, Settings: []SettingChange{{Name: "color", Before: blue}}},
			{Kind: "ColorPolicy", Path: path("store-v2"), After: effect, Settings: []SettingChange{{Name: "color", After: blue}}},
		}, r.Paths)
		assert.Empty(t, r.Introduced)
	})
	t.Run("another policy takes over", func(t *testing.T) {
		stored := decodeDocs(t, "cluster", diffTopology, grant, colorPolicy("store-blue", onStore, "{color: blue}"))
		changes := decodeDocs(t, "pr.yaml", `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: gw-red, namespace: app}
spec:
  targetRefs: [`+onGw+`]
  overrides: {color: red}
`)
		r, err := Diff(stored, changes, kinds.BuiltinKindTable(), nil, "default")
		require.NoError(t, err)
		require.Len(t, r.Paths, 1)
		assert.Equal(t, []SettingChange{{Name: "color", Before: &Setting{Value: "blue", Source: "app/store-blue"}, After: &Setting{Value: "red", Source: "app/gw-red"}}}, r.Paths[0].Settings)
		assert.Equal(t, []StatusDiff{
			{Kind: "ColorPolicy", Namespace: "app", Name: "gw-red", After: "Enforced"},
			{Kind: "ColorPolicy", Namespace: "app", Name: "store-blue", Before: "Enforced", After: "Overridden"},
		}, r.Policies)
	})
	t.Run("a denied policy changes nothing", func(t *testing.T) {
		stored := decodeDocs(t, "cluster", diffTopology, colorPolicy("store-blue", onStore, "{color: blue}"))
		changes := decodeDocs(t, "pr.yaml", colorPolicy("store-green", onStore, "{color: green}"))
		r, err := Diff(stored, changes, kinds.BuiltinKindTable(), nil, "default")
		require.NoError(t, err)
		assert.Empty(t, r.Paths)
		assert.Empty(t, r.Policies)
		assert.Equal(t, 1, r.Summary.Denied)
	})
}
