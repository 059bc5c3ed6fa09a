package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestInvalidStatusIsNewInvalids(t *testing.T) {
	// kubectl prints the status message, and the e2e suite asserts it exactly: invalidStatus
	// must give what apierrors.NewInvalid gives, for every shape of list.
	colorPolicy := schema.GroupKind{Group: "policies.controller.io", Kind: "ColorPolicy"}
	refs := field.NewPath("spec").Child("targetRefs")
	conflicted := field.Forbidden(refs.Index(0), "Conflicted: ColorPolicy apps/older sets spec.colors.light to \"blue\"")
	cases := []struct {
		name string
		kind schema.GroupKind
		obj  string
		errs field.ErrorList
	}{
		{name: "no causes", kind: colorPolicy, obj: "p"},
		{name: "one cause", kind: colorPolicy, obj: "p", errs: field.ErrorList{conflicted}},
		{name: "several causes of every type", kind: colorPolicy, obj: "p", errs: field.ErrorList{
			field.Invalid(refs.Index(0).Child("kind"), "Service", "InvalidTargetRef: not a target of ColorPolicy"),
			field.NotSupported(refs.Index(1).Child("group"), "example.com", []string{"gateway.networking.k8s.io", ""}),
			field.Required(refs.Index(2).Child("name"), "InvalidTargetRef"),
			field.Forbidden(field.NewPath("spec").Child("overrides"), "MultipleMergeStrategies: may not be set together with `spec.defaults`"),
			field.Duplicate(refs.Index(3), map[string]any{"kind": "HTTPRoute", "name": "shop"}),
			field.TooMany(refs, 17, 16),
			field.Invalid(field.NewPath("spec"), []any{"a", 1.5, nil}, "must be an object"),
		}},
		{name: "a repeated cause is one message but two causes", kind: colorPolicy, obj: "p", errs: field.ErrorList{conflicted, conflicted}},
		{name: "two repeats around another", kind: colorPolicy, obj: "p", errs: field.ErrorList{
			conflicted, field.Required(refs.Index(1).Child("name"), ""), conflicted}},
		{name: "a name with quotes, a backslash and non-ASCII", kind: colorPolicy, obj: "we\"ird\\näme\x00", errs: field.ErrorList{conflicted}},
		{name: "core group", kind: schema.GroupKind{Kind: "ConfigMap"}, obj: "c", errs: field.ErrorList{conflicted}},
		{name: "no field path", kind: colorPolicy, obj: "p", errs: field.ErrorList{field.Invalid(nil, "x", "detail")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := apierrors.NewInvalid(tc.kind, tc.obj, tc.errs).Status()
			assert.Equal(t, want, invalidStatus(tc.kind, tc.obj, tc.errs))
		})
	}
}
