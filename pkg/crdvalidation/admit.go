package crdvalidation

import (
	"context"
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// Reason is the stable reason the offline doors give a policy its CRD refuses: the API
// server's own StatusReason for a 422.
const Reason = "Invalid"

// Refusal is the API server's answer to a write its CRD refuses, before any webhook.
type Refusal struct {
	Kind schema.GroupVersionKind
	Name string
	// Unknown are the paths of fields the schema does not declare: a 400 under strict
	// field validation (kubectl's default), which the API server answers before anything
	// else is checked.
	Unknown []string
	// Errors are the schema's, the list types' and the CEL rules' field errors: a 422.
	Errors field.ErrorList
}

// Error is the message the API server sends, as kubectl prints it after "Error from
// server".
func (r *Refusal) Error() string {
	if len(r.Unknown) > 0 {
		return fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
			r.Kind.Kind, r.Kind.Version, r.Kind.Kind, StrictDecodingMessage(r.Unknown))
	}
	return apierrors.NewInvalid(r.Kind.GroupKind(), r.Name, r.Errors).Error()
}

// StrictDecodingMessage words unknown fields as the API server's strict decoder does.
func StrictDecodingMessage(unknown []string) string {
	parts := make([]string, len(unknown))
	for i, p := range unknown {
		parts[i] = fmt.Sprintf("unknown field %q", p)
	}
	return "strict decoding error: " + strings.Join(parts, ", ")
}

// Admit does to obj what the API server does to a CREATE (old nil) or an UPDATE of old
// before calling any webhook, when a CRD of obj's kind was given: it refuses unknown
// fields, applies the schema's defaults to obj in place (what the API server would
// store), and runs the schema, list-type, embedded-object and CEL validation. It returns
// nil when obj passes, or when no CRD of its kind was given; an error when its CRD cannot
// judge it (a version the CRD does not serve, a schema the API server would not accept).
func (s *Schemas) Admit(ctx context.Context, obj, old map[string]any) (*Refusal, error) {
	if s == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(stringAt(obj, "apiVersion"))
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(stringAt(obj, "kind"))
	v, err := s.lookup(gvk)
	if v == nil || err != nil {
		return nil, err
	}
	refusal := &Refusal{Kind: gvk, Name: stringAt(mapAt(obj, "metadata"), "name")}

	// Decoding: the body is read against the schema; what it does not declare is pruned,
	// and refused under strict field validation.
	work := jsonCopy(obj).(map[string]any)
	_, _, unknownMeta, err := schemaobjectmeta.GetObjectMetaWithOptions(work, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		refusal.Errors = field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
		return refusal, nil
	}
	refusal.Unknown = append(refusal.Unknown, unknownMeta...)
	if v.structural != nil {
		refusal.Unknown = append(refusal.Unknown, structuralpruning.PruneWithOptions(work, v.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(work, v.structural)
		ferr, unknownEmbedded := schemaobjectmeta.CoerceWithOptions(nil, work, v.structural, false,
			schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if ferr != nil {
			refusal.Errors = field.ErrorList{ferr}
			return refusal, nil
		}
		refusal.Unknown = append(refusal.Unknown, unknownEmbedded...)
	}
	if len(refusal.Unknown) > 0 {
		return refusal, nil
	}
	if v.structural != nil {
		structuraldefaulting.Default(work, v.structural)
		// What is stored is the defaulted object; obj's own status stays as given.
		for k, val := range work {
			if k != "status" {
				obj[k] = val
			}
		}
	}

	// The strategy: a write of the main resource ignores status when the status
	// subresource is on; then the object is validated.
	if v.hasStatus {
		delete(work, "status")
	}
	if old != nil {
		old = jsonCopy(old).(map[string]any)
	}
	refusal.Errors = v.validate(ctx, work, old)
	if len(refusal.Errors) > 0 {
		return refusal, nil
	}
	return nil, nil
}

// validate is the custom resource strategy's Validate (ValidateUpdate when old is set).
func (v *version) validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, v.validateMeta(obj)...)
	if v.structural == nil {
		return errs
	}
	var (
		schemaOptions []apiservervalidation.ValidationOption
		celOptions    []cel.Option
		oldObj        any
	)
	if old != nil {
		oldObj = old
		correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: v.structural})
		schemaOptions = append(schemaOptions, apiservervalidation.WithRatcheting(correlated))
		celOptions = append(celOptions, cel.WithRatcheting(correlated))
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, v.validator, schemaOptions...)...)
	} else {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v.validator)...)
	}
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, v.structural, false)...)
	if old == nil || len(structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	}
	if blocking(errs) {
		// As the API server: CEL rules are not run over an object whose shape is wrong.
		return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
	}
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, celOptions...)
	return append(errs, celErrs...)
}

// validateMeta checks the object's kind, apiVersion and metadata as the API server does
// for every custom resource (a name is a DNS subdomain; a namespace only where the CRD is
// namespaced).
func (v *version) validateMeta(obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	if got := stringAt(obj, "kind"); got != v.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), got, "must be "+v.kind.Kind))
	}
	meta, _, err := schemaobjectmeta.GetObjectMeta(obj, false)
	if err != nil {
		return append(errs, field.Invalid(field.NewPath("metadata"), nil, err.Error()))
	}
	if meta == nil {
		return errs
	}
	return append(errs, metavalidation.ValidateObjectMeta(meta, v.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
}

// blocking reports errors after which the API server does not run CEL rules.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func stringAt(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}
