package rules

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// TargetDeletions is how the deletion of a policy target is reviewed (the webhook
// targets.policyattachment.io, which fails open): a Gateway, a ListenerSet, an xRoute, and a
// Service when Services is set. A deletion that leaves policies applying nowhere, or changes
// the effective policy on the paths that remain, is admitted with a warning that says so
// (Warn, the default), refused (Deny), or admitted silently and logged (DryRun). A deletion
// that changes nothing is always admitted.
type TargetDeletions struct {
	// Default is the mode where no rule matches; empty means Warn.
	Default Mode `json:"default,omitempty"`
	// Rules are tried in order; the first whose every set field matches the target decides.
	Rules []TargetDeletionRule `json:"rules,omitempty"`
	// Services reviews the deletion of Services too (the webhook configuration must send them
	// as well: the chart does when this is set).
	Services bool `json:"services,omitempty"`

	compiled []labels.Selector
}

// TargetDeletionRule matches a deletion by the target's kind and its namespace's labels. An
// empty field matches everything.
type TargetDeletionRule struct {
	Mode Mode `json:"mode"`
	// Kinds are target kinds, as "Kind" (any group) or "Kind.group": Gateway, HTTPRoute,
	// Service...
	Kinds []string `json:"kinds,omitempty"`
	// NamespaceSelector selects the target's namespace by its labels
	// (kubernetes.io/metadata.name names one).
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// validate checks the modes, kinds and selectors, and compiles the selectors.
func (t *TargetDeletions) validate() []string {
	var errs []string
	if t.Default != "" && !validMode(t.Default) {
		errs = append(errs, fmt.Sprintf("targetDeletions.default: unsupported mode %q; supported: %s", t.Default, modeList()))
	}
	t.compiled = t.compiled[:0]
	for i, r := range t.Rules {
		where := fmt.Sprintf("targetDeletions.rules[%d]", i)
		if !validMode(r.Mode) {
			errs = append(errs, fmt.Sprintf("%s.mode: unsupported mode %q; supported: %s", where, r.Mode, modeList()))
		}
		errs = append(errs, validateKinds(where, r.Kinds)...)
		sel, err := compileSelector(r.NamespaceSelector)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s.namespaceSelector: %v", where, err))
		}
		t.compiled = append(t.compiled, sel)
	}
	return errs
}

// ReviewsDeletionOf reports whether deleting an object of kind gk is reviewed: Gateways,
// ListenerSets and xRoutes (the watched kinds of those roles), Services when configured.
func (s *Config) ReviewsDeletionOf(gk schema.GroupKind) bool {
	info, known := kinds.TargetInfoFor(gk)
	if !known || !info.Watched {
		return false
	}
	switch info.Role {
	case kinds.RoleGateway, kinds.RoleListenerSet, kinds.RoleRoute:
		return true
	}
	return s != nil && s.TargetDeletions.Services && gk == schema.GroupKind{Group: kinds.CoreGroup, Kind: "Service"}
}

// cleanupRequesters are the controllers that delete objects on someone else's decision: the
// namespace controller empties a namespace being deleted, the garbage collector deletes what
// a deleted owner owned. A refusal would only make them retry forever (and a namespace stay
// Terminating), so they are warned, never refused. (The webhook configuration's
// matchConditions keep most of their requests from reaching the webhook at all.)
var cleanupRequesters = []string{
	"system:serviceaccount:kube-system:namespace-controller",
	"system:serviceaccount:kube-system:generic-garbage-collector",
	"system:kube-controller-manager",
}

// TargetDeletionMode returns the mode of a deletion by user of an object of kind gk in a
// namespace carrying namespaceLabels: the first matching rule's, else the default (Warn);
// Warn instead of Deny for the controllers that clean up after others (cleanupRequesters).
func (s *Config) TargetDeletionMode(gk schema.GroupKind, namespaceLabels map[string]string, user string) Mode {
	mode := s.targetDeletionMode(gk, namespaceLabels)
	if mode == Deny && slices.Contains(cleanupRequesters, user) {
		return Warn
	}
	return mode
}

func (s *Config) targetDeletionMode(gk schema.GroupKind, namespaceLabels map[string]string) Mode {
	if s == nil {
		return Warn
	}
	t := &s.TargetDeletions
	for i, r := range t.Rules {
		if !kindListed(r.Kinds, gk.Group, gk.Kind) {
			continue
		}
		var sel labels.Selector
		if i < len(t.compiled) {
			sel = t.compiled[i]
		} else {
			sel, _ = compileSelector(r.NamespaceSelector) // a Config built in code without Validate
		}
		if sel.Matches(labels.Set(namespaceLabels)) {
			return r.Mode
		}
	}
	if t.Default != "" {
		return t.Default
	}
	return Warn
}

func (t *TargetDeletions) empty() bool {
	return t.Default == "" && len(t.Rules) == 0 && !t.Services
}
