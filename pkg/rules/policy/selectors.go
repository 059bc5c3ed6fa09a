package policy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Namespaces a target selector selects in (Envoy Gateway's TargetSelector.namespaces.from).
const (
	SelectSameNamespace = "Same"
	SelectAllNamespaces = "All"
	SelectNamespaces    = "Selector"
)

// TargetSelector is one well-formed entry of spec.targetSelectors: the objects of one kind
// whose labels match, in the namespaces it names. Entries the rules deny as malformed are
// not kept: they select nothing.
type TargetSelector struct {
	Group, Kind string
	// From is Same (the default: the policy's namespace), All, or Selector (the namespaces
	// whose labels Namespaces matches).
	From       string
	Namespaces labels.Selector
	Labels     labels.Selector
	// SectionName narrows each selected object to one section, on kinds whose selectors
	// have one (the row's selectorSectionName: kgateway's and agentgateway's).
	SectionName string
	// SectionNameIgnored says the selector sets a sectionName its kind's selectors do not
	// have (Envoy Gateway's): the implementation never sees it, so it selects whole objects.
	SectionNameIgnored bool
	// Path is where the selector sits in the object, for messages.
	Path *field.Path
}

var targetSelectorsPath = specPath.Child("targetSelectors")

// TargetSelectors returns the policy's well-formed target selectors.
func (p *Policy) TargetSelectors() []TargetSelector { return p.selectors }

func (p *Policy) decodeTargetSelectors(list []any) {
	for i, item := range list {
		if sel, ok := decodeTargetSelector(p.Row, item, targetSelectorsPath.Index(i)); ok {
			p.selectors = append(p.selectors, sel)
		}
	}
}

// decodeTargetSelector decodes one entry as the row's implementation reads it: a sectionName
// counts only where the row says its selectors have one.
func decodeTargetSelector(row *kinds.KindRow, item any, path *field.Path) (TargetSelector, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return TargetSelector{}, false
	}
	sel := TargetSelector{Group: kinds.GatewayGroup, From: SelectSameNamespace, Path: path}
	if g, ok := m["group"].(string); ok {
		sel.Group = g
	}
	sel.Kind, _ = m["kind"].(string)
	if section, ok := m["sectionName"]; ok && section != nil {
		if row.SelectorSectionName {
			sel.SectionName, _ = section.(string)
		} else {
			sel.SectionNameIgnored = true
		}
	}
	if sel.Kind == "" {
		return TargetSelector{}, false
	}
	var err error
	if sel.Labels, err = labelSelector(map[string]any{"matchLabels": m["matchLabels"], "matchExpressions": m["matchExpressions"]}); err != nil {
		return TargetSelector{}, false
	}
	if ns, ok := m["namespaces"].(map[string]any); ok {
		sel.From, _ = ns["from"].(string)
		switch sel.From {
		case SelectSameNamespace, SelectAllNamespaces:
		case SelectNamespaces:
			raw, _ := ns["selector"].(map[string]any)
			if raw == nil {
				return TargetSelector{}, false
			}
			if sel.Namespaces, err = labelSelector(raw); err != nil {
				return TargetSelector{}, false
			}
		default:
			return TargetSelector{}, false
		}
	}
	return sel, true
}

// labelSelector converts a generic metav1.LabelSelector.
func labelSelector(raw map[string]any) (labels.Selector, error) {
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}
