package policy

import (
	"slices"
	"strings"

	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// ObjectRef is one resolved reference to another object, from a reference field.
type ObjectRef struct {
	Group, Kind, Name string
	Namespace         string
	HasNamespace      bool
	ClusterScoped     bool
	Path              *field.Path
	Spec              *kinds.Reference
}

// ObjectRefs walks the row's reference fields and returns every reference found, with
// defaults applied. Values of the wrong shape are returned as errors.
func (p *Policy) ObjectRefs() ([]ObjectRef, field.ErrorList) {
	var refs []ObjectRef
	var errs field.ErrorList
	for i := range p.Row.References {
		spec := &p.Row.References[i]
		walkPath(p.Spec(), strings.Split(spec.Path, "."), field.NewPath("spec"), func(v any, path *field.Path) {
			m, ok := v.(map[string]any)
			if !ok {
				errs = append(errs, field.Invalid(path, DescribeValue(v), "must be an object reference"))
				return
			}
			ref, err := decodeObjectRef(m, spec, path)
			ref.Group = p.Row.CoreGroup(ref.Group)
			if err != nil {
				errs = append(errs, field.Invalid(path, DescribeValue(v), "must be an object reference: "+err.Error()))
				return
			}
			refs = append(refs, ref)
		})
	}
	return refs, errs
}

func decodeObjectRef(m map[string]any, spec *kinds.Reference, path *field.Path) (ObjectRef, error) {
	ref := ObjectRef{Path: path, Spec: spec}
	switch spec.Shape {
	case kinds.NameNamespaceShape:
		// Only a name and a namespace: the kind is the field's own.
		var nn struct {
			Name      string  `json:"name"`
			Namespace *string `json:"namespace,omitempty"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &nn); err != nil {
			return ref, err
		}
		ref.Group, ref.Kind, ref.Name = spec.DefaultGroup, spec.DefaultKind, nn.Name
		if nn.Namespace != nil {
			ref.HasNamespace, ref.Namespace = true, *nn.Namespace
		}
	case kinds.IssuerReferenceShape:
		// cert-manager's own type, so the field names and defaults are exactly theirs.
		var ir cmmeta.IssuerReference
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ir); err != nil {
			return ref, err
		}
		ref.Group, ref.Kind, ref.Name = ir.Group, ir.Kind, ir.Name
	default:
		var or gatewayv1.SecretObjectReference
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &or); err != nil {
			return ref, err
		}
		ref.Name = string(or.Name)
		if or.Group != nil {
			ref.Group = string(*or.Group)
		} else {
			ref.Group = spec.DefaultGroup
		}
		if or.Kind != nil {
			ref.Kind = string(*or.Kind)
		}
		if or.Namespace != nil {
			ref.HasNamespace = true
			ref.Namespace = string(*or.Namespace)
		}
	}
	if ref.Group == "" && spec.Shape == kinds.IssuerReferenceShape {
		ref.Group = spec.DefaultGroup
	}
	if ref.Kind == "" {
		ref.Kind = spec.DefaultKind
	}
	ref.ClusterScoped = slices.Contains(spec.ClusterScopedKinds, ref.Kind)
	return ref, nil
}

// walkPath calls fn for every value at path below m; a segment ending in "[]" is a list
// whose items are each walked. Absent fields are skipped.
func walkPath(m map[string]any, segments []string, path *field.Path, fn func(any, *field.Path)) {
	if len(segments) == 0 || m == nil {
		return
	}
	seg := segments[0]
	isList := strings.HasSuffix(seg, "[]")
	name := strings.TrimSuffix(seg, "[]")
	v, ok := m[name]
	if !ok || v == nil {
		return
	}
	child := path.Child(name)
	visit := func(item any, p *field.Path) {
		if len(segments) == 1 {
			fn(item, p)
			return
		}
		if next, ok := item.(map[string]any); ok {
			walkPath(next, segments[1:], p, fn)
		}
	}
	if !isList {
		visit(v, child)
		return
	}
	list, ok := v.([]any)
	if !ok {
		fn(v, child)
		return
	}
	for i, item := range list {
		visit(item, child.Index(i))
	}
}
