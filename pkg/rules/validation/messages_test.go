package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

func TestMessagesName(t *testing.T) {
	var none *Messages
	reveal := &Messages{RevealOtherNamespaces: true}
	tests := map[string]struct {
		msgs                                   *Messages
		kind, namespace, name, requester, want string
	}{
		"own namespace":                  {none, "ColorPolicy", "app", "a", "app", "ColorPolicy app/a"},
		"other namespace":                {none, "ColorPolicy", "web", "a", "app", `a ColorPolicy in namespace "web"`},
		"other namespace, an initialism": {none, "HTTPRoute", "web", "a", "app", `an HTTPRoute in namespace "web"`},
		"other namespace, a vowel":       {none, "AuthPolicy", "web", "a", "app", `an AuthPolicy in namespace "web"`},
		"revealed":                       {reveal, "ColorPolicy", "web", "a", "app", "ColorPolicy web/a"},
		"revealed by the former name":    {&Messages{NamesFromOtherNamespaces: true}, "ColorPolicy", "web", "a", "app", "ColorPolicy web/a"},
		"cluster-scoped":                 {none, "GatewayClass", "", "c", "", "GatewayClass c"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.msgs.Name(tc.kind, tc.namespace, tc.name, tc.requester))
		})
	}
}

func TestMessagesTarget(t *testing.T) {
	var none *Messages
	route := policy.TargetKey{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "web", Name: "r", Section: "rule-1"}
	// A target the requester named is theirs to see, wherever it is.
	assert.Equal(t, "HTTPRoute web/r section rule-1", none.Target(route, false, "app"))
	// One a selector reached in another namespace is not.
	assert.Equal(t, `an HTTPRoute in namespace "web"`, none.Target(route, true, "app"))
	assert.Equal(t, "HTTPRoute web/r section rule-1", none.Target(route, true, "web"))
	assert.Equal(t, "HTTPRoute web/r section rule-1", (&Messages{RevealOtherNamespaces: true}).Target(route, true, "app"))
}
