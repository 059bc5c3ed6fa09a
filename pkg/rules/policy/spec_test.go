package policy

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/internal/intern"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// rateLimitWithEverything has bare-free stanzas, a strategy, named rules, numbers, a list
// and a string with characters JSON escapes: what a stored spec must give back unchanged.
const rateLimitWithEverything = `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: limits, namespace: apps}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}
  defaults:
    strategy: merge
    limits:
      per-user:
        rates: [{limit: 10, window: 1m}, {limit: 1000, window: 1h}]
        when: [{predicate: "auth.identity.userid != \"<admin>\" && true"}]
`

func TestStoredPolicyReadsTheSameSpecAndBlocks(t *testing.T) {
	table := kinds.BuiltinKindTable()
	p := policyOf(t, table, rateLimitWithEverything)
	judged := roundTrip(t, p.Spec())
	judgedBlocks := p.Blocks()

	c := p.Compact()

	require.Nil(t, c.spec, "a compact policy keeps no generic spec")
	require.NotEmpty(t, c.encodedSpec)
	assert.NotNil(t, p.spec, "the policy compacted is left as it is")
	assert.Equal(t, judged, roundTrip(t, c.Spec()))
	stored := c.Blocks()
	require.Len(t, stored, len(judgedBlocks))
	for i := range stored {
		assert.Equal(t, judgedBlocks[i].Field, stored[i].Field)
		assert.Equal(t, judgedBlocks[i].Class, stored[i].Class)
		assert.Equal(t, judgedBlocks[i].Strategy, stored[i].Strategy)
		assert.Equal(t, judgedBlocks[i].Path.String(), stored[i].Path.String())
		assert.Equal(t, roundTrip(t, judgedBlocks[i].Body), roundTrip(t, stored[i].Body))
	}
}

func TestStoredPolicyGivesEachCallerItsOwnSpec(t *testing.T) {
	p := policyOf(t, kinds.BuiltinKindTable(), rateLimitWithEverything)
	c := p.Compact()

	first := c.Spec()
	delete(first, "defaults")
	assert.Contains(t, c.Spec(), "defaults", "what one caller does to its copy is not stored")
}

func TestSpecJSONCannotHoldStaysGeneric(t *testing.T) {
	// YAML reads `.nan` as a float JSON has no word for; such a spec is kept as it is.
	p := policyOf(t, kinds.BuiltinKindTable(), rateLimitWithEverything)
	p.spec["weight"] = math.NaN()

	assert.Same(t, p, p.Compact())
	assert.Empty(t, p.encodedSpec)
	assert.Contains(t, p.Spec(), "weight")
}

func TestStoredPolicyKeepsItsTextsInOneString(t *testing.T) {
	table := kinds.BuiltinKindTable()
	p := policyOf(t, table, `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: apps, uid: 5d3c6a1e-0000-4000-8000-000000000001}
spec:
  targetRefs:
  - {group: "", kind: Service, name: shop, sectionName: https}
  - {group: "", kind: Service, name: cart, namespace: other}
  validation: {hostname: shop.apps.svc, wellKnownCACertificates: System}`)
	want := *p
	wantRefs := slices.Clone(p.TargetRefs)

	p = p.Compact()

	// The same values...
	assert.Equal(t, want.Name, p.Name)
	assert.Equal(t, want.UID, p.UID)
	assert.Equal(t, want.Namespace, p.Namespace)
	assert.Equal(t, wantRefs, p.TargetRefs)
	// ...with the name, the UID, the references' names and the spec end to end in one
	// allocation, and the repeating strings interned.
	at := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	assert.Equal(t, at(p.Name)+uintptr(len(p.Name)), at(p.UID))
	assert.Equal(t, at(p.UID)+uintptr(len(p.UID)), at(p.TargetRefs[0].Name))
	assert.Equal(t, at(p.TargetRefs[0].Name)+uintptr(len("shop")), at(p.TargetRefs[1].Name))
	assert.Equal(t, at(p.TargetRefs[1].Name)+uintptr(len("cart")), at(p.encodedSpec))
	for _, s := range []string{p.Namespace, p.TargetRefs[0].Kind, p.TargetRefs[0].SectionName, p.TargetRefs[1].Namespace} {
		assert.Same(t, unsafe.StringData(intern.String(strings.Clone(s))), unsafe.StringData(s), "%q is interned", s)
	}
}
