package crdvalidation

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Schemas holds the CRDs given, and compiles each served version's validation the first
// time an object of it is admitted: a CRD set such as Envoy Gateway's holds large schemas
// (EnvoyProxy) that most runs never need.
type Schemas struct {
	mu       sync.Mutex
	crds     map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition
	compiled map[schema.GroupVersionKind]*version
}

// version is what the API server builds for one served version of a CRD.
type version struct {
	kind       schema.GroupVersionKind
	namespaced bool
	// structural is the version's structural schema, its defaults pruned as the API
	// server prunes them.
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
	// hasStatus: the status subresource is on, so a write of the main resource ignores
	// status.
	hasStatus bool
}

// New returns an empty set: it admits every object as unknown.
func New() *Schemas {
	return &Schemas{
		crds:     map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition{},
		compiled: map[schema.GroupVersionKind]*version{},
	}
}

// Add takes a CustomResourceDefinition document (apiextensions.k8s.io/v1). A later CRD of
// the same group and kind replaces an earlier one, as a second apply would.
func (s *Schemas) Add(obj map[string]any) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, crd); err != nil {
		return fmt.Errorf("not a CustomResourceDefinition the API server would read: %w", err)
	}
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	if gk.Group == "" || gk.Kind == "" {
		return fmt.Errorf("CustomResourceDefinition %q names no group or kind", crd.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crds[gk] = crd
	for gvk := range s.compiled {
		if gvk.GroupKind() == gk {
			delete(s.compiled, gvk)
		}
	}
	return nil
}

// Len is the number of CRDs held.
func (s *Schemas) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.crds)
}

// Knows reports whether a CRD of gk was given.
func (s *Schemas) Knows(gk schema.GroupKind) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.crds[gk]
	return ok
}

// lookup returns the compiled validation of gvk, nil when no CRD of its group and kind was
// given, and an error when the CRD does not serve the version or its schema is one the API
// server would not have accepted.
func (s *Schemas) lookup(gvk schema.GroupVersionKind) (*version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.compiled[gvk]; ok {
		return v, nil
	}
	crd, ok := s.crds[gvk.GroupKind()]
	if !ok {
		return nil, nil
	}
	v, err := compile(crd, gvk)
	if err != nil {
		return nil, err
	}
	s.compiled[gvk] = v
	return v, nil
}

// compile builds one version's validation the way the API server's custom resource
// handler does: the schema converted to the internal version, made structural, its
// defaults pruned; the OpenAPI validator and the CEL validator over it.
func compile(crd *apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind) (*version, error) {
	if !apihelpers.HasServedCRDVersion(crd, gvk.Version) {
		return nil, fmt.Errorf("the CustomResourceDefinition %s does not serve version %s", crd.Name, gvk.Version)
	}
	v := &version{kind: gvk, namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}
	sub, err := apihelpers.GetSubresourcesForVersion(crd, gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: %w", crd.Name, err)
	}
	v.hasStatus = sub != nil && sub.Status != nil
	val, err := apihelpers.GetSchemaForVersion(crd, gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: %w", crd.Name, err)
	}
	if val == nil || val.OpenAPIV3Schema == nil {
		return v, nil // no schema: the API server keeps every field and checks none
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: converting its schema: %w", crd.Name, err)
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: its schema at %s is not structural: %w", crd.Name, gvk.Version, err)
	}
	if errs := structuralschema.ValidateStructural(nil, structural); len(errs) > 0 {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: its schema at %s is not structural: %v", crd.Name, gvk.Version, errs.ToAggregate())
	}
	structural = structural.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: its defaults: %w", crd.Name, err)
	}
	v.structural = structural
	if v.validator, _, err = apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema); err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition %s: its schema at %s: %w", crd.Name, gvk.Version, err)
	}
	v.cel = cel.NewValidator(structural, true, celconfig.PerCallLimit)
	return v, nil
}
