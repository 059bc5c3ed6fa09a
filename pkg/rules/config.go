package rules

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Config is the part of a config file that changes what a verdict does, as opposed to
// what it finds (the kind rows): how each denial is enforced and how messages name other
// objects. The zero value (and nil) is the safe default: every denial denies, no name
// leaves its namespace.
type Config struct {
	Enforcement Enforcement         `json:"enforcement,omitempty"`
	Messages    validation.Messages `json:"messages,omitempty"`
	// SkipLabel lists who may add, change or remove the label that turns review off for a
	// namespace, besides those RBAC lets `skip` it (pkg/admission, NamespaceGuard).
	SkipLabel SkipLabelGuard `json:"skipLabel,omitempty"`
	// TargetDeletions is how deleting a Gateway, ListenerSet, xRoute (or Service) is reviewed
	// (target_deletions.go): Warn unless a rule says Deny.
	TargetDeletions TargetDeletions `json:"targetDeletions,omitempty"`

	// compiled rules, built by Validate.
	compiled []compiledEnforcementRule
}

// SkipLabelGuard names requesters who may add, change or remove the skip label on any
// namespace. Empty by default: then only those RBAC grants the verb skip on namespaces in
// API group policyattachment.io may (cluster admins have it through their wildcard).
type SkipLabelGuard struct {
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// ServiceAccounts are namespace/name.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
}

// Allows reports whether the guard lists a requester, by user name (a service account's is
// system:serviceaccount:NAMESPACE:NAME) or any of its groups.
func (g SkipLabelGuard) Allows(user string, groups []string) bool {
	if slices.Contains(g.Users, user) {
		return true
	}
	for _, sa := range g.ServiceAccounts {
		if namespace, name, ok := strings.Cut(sa, "/"); ok && user == "system:serviceaccount:"+namespace+":"+name {
			return true
		}
	}
	for _, group := range groups {
		if slices.Contains(g.Groups, group) {
			return true
		}
	}
	return false
}

// SkipLabelOrNone is the configured SkipLabelGuard; a nil Config lists nobody.
func (s *Config) SkipLabelOrNone() SkipLabelGuard {
	if s == nil {
		return SkipLabelGuard{}
	}
	return s.SkipLabel
}

func (g SkipLabelGuard) empty() bool {
	return len(g.Users) == 0 && len(g.Groups) == 0 && len(g.ServiceAccounts) == 0
}

// Mode says what happens to a denial.
type Mode string

const (
	// Deny rejects the write (the default).
	Deny Mode = "Deny"
	// Warn admits the write and returns the denial as a warning kubectl prints.
	Warn Mode = "Warn"
	// DryRun admits the write silently; the webhook counts the denial in its metrics and logs it.
	DryRun Mode = "DryRun"
)

var modes = []Mode{Deny, Warn, DryRun}

// Enforcement maps denials to modes. Rules are tried in order; the first whose every set
// field matches the denial decides, otherwise Default does. A platform team starts with
// `default: Warn` and adds Deny rules (or flips the default) as namespaces are clean.
type Enforcement struct {
	Default Mode              `json:"default,omitempty"`
	Rules   []EnforcementRule `json:"rules,omitempty"`
}

// EnforcementRule matches denials by reason, policy kind and the policy's namespace labels.
// An empty field matches everything.
type EnforcementRule struct {
	Mode Mode `json:"mode"`
	// Reasons are stable reasons (InvalidTargetRef, RefNotPermitted, ...).
	Reasons []string `json:"reasons,omitempty"`
	// Kinds are policy kinds, as "Kind" (any group) or "Kind.group".
	Kinds []string `json:"kinds,omitempty"`
	// NamespaceSelector selects the namespace of the policy by its labels. Every namespace
	// carries kubernetes.io/metadata.name, so one can be named directly.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

type compiledEnforcementRule struct {
	EnforcementRule
	selector labels.Selector
}

// defaultConfig is what a nil *Config means.
var defaultConfig = &Config{}

// Validate checks modes, reasons and selectors, and compiles the selectors.
func (s *Config) Validate() error {
	var errs []string
	if s.Enforcement.Default != "" && !validMode(s.Enforcement.Default) {
		errs = append(errs, fmt.Sprintf("enforcement.default: unsupported mode %q; supported: %s", s.Enforcement.Default, modeList()))
	}
	for i, sa := range s.SkipLabel.ServiceAccounts {
		if namespace, name, ok := strings.Cut(sa, "/"); !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, fmt.Sprintf("skipLabel.serviceAccounts[%d]: %q is not namespace/name", i, sa))
		}
	}
	s.compiled = s.compiled[:0]
	for i, r := range s.Enforcement.Rules {
		where := fmt.Sprintf("enforcement.rules[%d]", i)
		if !validMode(r.Mode) {
			errs = append(errs, fmt.Sprintf("%s.mode: unsupported mode %q; supported: %s", where, r.Mode, modeList()))
		}
		for j, reason := range r.Reasons {
			if !validation.IsReason(reason) {
				errs = append(errs, fmt.Sprintf("%s.reasons[%d]: unknown reason %q; known: %s", where, j, reason, strings.Join(validation.Reasons, ", ")))
			}
		}
		errs = append(errs, validateKinds(where, r.Kinds)...)
		selector, err := compileSelector(r.NamespaceSelector)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s.namespaceSelector: %v", where, err))
		}
		s.compiled = append(s.compiled, compiledEnforcementRule{EnforcementRule: r, selector: selector})
	}
	errs = append(errs, s.TargetDeletions.validate()...)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ModeFor returns the mode of a denial with reason, for policy p whose namespace carries
// namespaceLabels.
func (s *Config) ModeFor(reason string, p *policy.Policy, namespaceLabels map[string]string) Mode {
	if s == nil {
		return Deny
	}
	for i := range s.Enforcement.Rules {
		var r compiledEnforcementRule
		if i < len(s.compiled) {
			r = s.compiled[i]
		} else {
			// A Config built in code without Validate: compile here (an invalid selector
			// matches nothing, so it can only keep a denial at the default).
			r.EnforcementRule = s.Enforcement.Rules[i]
			r.selector, _ = compileSelector(r.NamespaceSelector)
		}
		if r.matches(reason, p, namespaceLabels) {
			return r.Mode
		}
	}
	if s.Enforcement.Default != "" {
		return s.Enforcement.Default
	}
	return Deny
}

func (r *compiledEnforcementRule) matches(reason string, p *policy.Policy, namespaceLabels map[string]string) bool {
	if len(r.Reasons) > 0 && !slices.Contains(r.Reasons, reason) {
		return false
	}
	return kindListed(r.Kinds, p.Row.Group, p.Row.Kind) && r.selector.Matches(labels.Set(namespaceLabels))
}

// kindListed reports whether a rule's kinds ("Kind", any group, or "Kind.group") list the
// kind group/kind; an empty list lists every kind.
func kindListed(list []string, group, kind string) bool {
	if len(list) == 0 {
		return true
	}
	return slices.ContainsFunc(list, func(k string) bool {
		k, g, grouped := strings.Cut(k, ".")
		return k == kind && (!grouped || g == group)
	})
}

// validateKinds checks a rule's kinds, at where (its path in the config).
func validateKinds(where string, list []string) []string {
	var errs []string
	for j, k := range list {
		if k == "" || strings.HasPrefix(k, ".") {
			errs = append(errs, fmt.Sprintf("%s.kinds[%d]: %q is not Kind or Kind.group", where, j, k))
		}
	}
	return errs
}

// compileSelector compiles a rule's namespaceSelector: nil selects every namespace; an
// invalid one selects none (so it can only keep a rule's subject at the default).
func compileSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return labels.Nothing(), err
	}
	return sel, nil
}

// configFile is a config file: kind rows plus the Config.
type configFile struct {
	// Implementations replace the built-in controller names of an implementation (an
	// installation that renamed its controller), or add one for the file's own rows.
	Implementations []kinds.Implementation `json:"implementations,omitempty"`
	Kinds           []kinds.KindRow        `json:"kinds,omitempty"`
	Config
}

// LoadConfig reads a config file: its kind rows are added to table and its Config is
// returned. Unknown fields are errors, so a typo never silently turns enforcement off.
func LoadConfig(data []byte, source string, table *kinds.KindTable) (*Config, error) {
	var f configFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(f.Kinds) == 0 && len(f.Implementations) == 0 && f.Enforcement.Default == "" && len(f.Enforcement.Rules) == 0 && f.Messages == (validation.Messages{}) && f.SkipLabel.empty() && f.TargetDeletions.empty() {
		return nil, fmt.Errorf("%s: nothing configured; expected `kinds`, `implementations`, `enforcement`, `messages`, `skipLabel` or `targetDeletions`", source)
	}
	if err := f.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := table.PutImplementations(f.Implementations, source); err != nil {
		return nil, err
	}
	if len(f.Kinds) > 0 {
		if err := table.Add(f.Kinds, source); err != nil {
			return nil, err
		}
	}
	s := f.Config
	return &s, nil
}

// MessagesOrNil is the configured Messages, nil (the defaults) for a nil Config.
func (s *Config) MessagesOrNil() *validation.Messages {
	if s == nil {
		return nil
	}
	return &s.Messages
}

// Relaxes reports whether any denial could be enforced other than Deny.
func (s *Config) Relaxes() bool {
	if s == nil {
		return false
	}
	if s.Enforcement.Default != "" && s.Enforcement.Default != Deny {
		return true
	}
	for _, r := range s.Enforcement.Rules {
		if r.Mode != Deny {
			return true
		}
	}
	return false
}

// Describe renders the enforcement settings in one line per rule, for people.
func (s *Config) Describe() []string {
	if s == nil {
		s = defaultConfig
	}
	def := s.Enforcement.Default
	if def == "" {
		def = Deny
	}
	out := []string{fmt.Sprintf("default: %s", def)}
	for _, r := range s.Enforcement.Rules {
		var when []string
		if len(r.Reasons) > 0 {
			when = append(when, "reasons "+strings.Join(r.Reasons, ","))
		}
		if len(r.Kinds) > 0 {
			when = append(when, "kinds "+strings.Join(r.Kinds, ","))
		}
		if r.NamespaceSelector != nil {
			sel, _ := metav1.LabelSelectorAsSelector(r.NamespaceSelector)
			if sel != nil {
				when = append(when, "namespaces "+sel.String())
			}
		}
		if len(when) == 0 {
			when = append(when, "everything")
		}
		out = append(out, fmt.Sprintf("%s: %s", r.Mode, strings.Join(when, "; ")))
	}
	return out
}

func validMode(m Mode) bool {
	for _, v := range modes {
		if m == v {
			return true
		}
	}
	return false
}

func modeList() string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}
