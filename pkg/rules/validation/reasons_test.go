package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReasonIn(t *testing.T) {
	cases := map[string]string{
		`Unsupported value: "Service": InvalidTargetRef: supported values: "gateway.networking.k8s.io/Gateway"`:                           ReasonInvalidTargetRef,
		`Forbidden: RefNotPermitted: no ReferenceGrant in namespace "infra" lets ColorPolicy from namespace "app" reference Gateway "gw"`: ReasonRefNotPermitted,
		`Required value: InvalidTargetRef`:                                            ReasonInvalidTargetRef,
		"Conflicted: ColorPolicy app/a on HTTPRoute app/r1 also sets atomic defaults": ReasonConflicted,
		`Invalid value: "Conflicted": must be a DNS label`:                            "",
		"spec.targetRefs: Required value":                                             "",
	}
	for cause, want := range cases {
		assert.Equal(t, want, ReasonIn(cause), cause)
	}
}
