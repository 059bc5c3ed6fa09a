package kinds

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Class is the GEP-713 class of a policy kind.
type Class string

const (
	// Direct policies affect only their declared target; the merge strategy is None.
	Direct Class = "Direct"
	// Inherited policies span the hierarchy below their target (defaults and overrides).
	Inherited Class = "Inherited"
)

// Scope says whether a kind's objects live in a namespace.
type Scope string

const (
	Namespaced Scope = "Namespaced"
	Cluster    Scope = "Cluster"
)

// SectionKind names what a targetRef's sectionName selects inside a target.
type SectionKind string

const (
	NoSections  SectionKind = ""
	Listener    SectionKind = "Listener"
	RouteRule   SectionKind = "RouteRule"
	ServicePort SectionKind = "ServicePort"
	// SubBackend is one of the backends an agentgateway AgentgatewayBackend groups.
	SubBackend SectionKind = "SubBackend"
)

// Canonical merge strategies (GEP-713 "atomicity"; Kuadrant RFC "merge").
const (
	StrategyAtomic = "atomic"
	StrategyPatch  = "patch"
	StrategyMerge  = "merge"
)

// KindRow is everything the engine knows about one policy kind. Rules read rows;
// they never switch on a kind's name.
type KindRow struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Scope Scope  `json:"scope,omitempty"`
	Class Class  `json:"class"`
	// Versions lists the API versions served for the kind; empty accepts any.
	Versions []string `json:"versions,omitempty"`

	// TargetRefFields lists the spec fields that hold target references: "targetRefs" (a
	// list), "targetRef" (a single object), "targetSelectors" (label selectors of targets).
	TargetRefFields []string `json:"targetRefFields,omitempty"`
	// TargetsOptional admits a policy that names no target: Istio's policies apply to their
	// whole namespace, or to the workloads spec.selector picks, without one.
	TargetsOptional bool `json:"targetsOptional,omitempty"`
	// ExclusiveFields are spec fields that may not be set together with a target (Istio:
	// "only one of targetRefs or selector can be set").
	ExclusiveFields []string `json:"exclusiveFields,omitempty"`
	// SelectorsExclusive refuses targetSelectors together with targetRef(s) (agentgateway's
	// ExactlyOneOf=targetRefs;targetSelectors).
	SelectorsExclusive bool `json:"selectorsExclusive,omitempty"`
	// SelectorSectionName says the kind's targetSelectors carry a sectionName that narrows
	// each selected object to one section (kgateway's and agentgateway's
	// LocalPolicyTargetSelectorWithSectionName). Elsewhere (Envoy Gateway's TargetSelector,
	// kgateway's LocalPolicyTargetSelector) the CRD has no such field: the API server prunes
	// it and the implementation selects whole objects, so a selector's sectionName is
	// ignored here too, with a warning.
	SelectorSectionName bool `json:"selectorSectionName,omitempty"`
	// WholeHTTPPorts says the implementation serves the plain-HTTP listeners that share a
	// port (a Gateway's own and those of the ListenerSets it accepts) as one, so a policy
	// that reaches one of them through a target must reach all of them through it: a
	// listener alone is refused while another shares its port, a whole Gateway while one of
	// its ListenerSets shares a port with it, a whole ListenerSet while a listener outside it
	// does (Envoy Gateway's ClientTrafficPolicy).
	WholeHTTPPorts bool `json:"wholeHTTPPorts,omitempty"`
	// MaxPoliciesPerTarget, when set, is how many policies of the kind the implementation
	// accepts at one target object (whatever their sections): it refuses a policy that has as
	// many older ones there already (kube-agentic-networking's XAccessPolicy: 5). Not a CRD
	// limit (maxItems bounds one policy's references, not the policies of a target).
	MaxPoliciesPerTarget int `json:"maxPoliciesPerTarget,omitempty"`
	// OnePerTargetWhen, when set, says the implementation accepts one policy per target
	// object (whatever the sections) whose spec field holds one of the values, the oldest:
	// kube-agentic-networking's one ExternalAuth XAccessPolicy per target.
	OnePerTargetWhen *FieldValues `json:"onePerTargetWhen,omitempty"`
	// MaxTargetRefs caps spec.targetRefs where the kind's CRD does (its maxItems); 0: the
	// CRD sets no limit, and neither does the webhook (a limit copied from another project
	// would deny what the implementation accepts).
	MaxTargetRefs int `json:"maxTargetRefs,omitempty"`
	// OtherTargetsImplementationSpecific admits, with an ImplementationSpecific warning, a
	// target kind outside Targets: the kind's CRD accepts any kind and the spec leaves the
	// others to implementations (Gateway API's BackendTLSPolicy: "Implementations MAY use
	// BackendTLSPolicy for ... Other resource types beyond Service").
	OtherTargetsImplementationSpecific bool `json:"otherTargetsImplementationSpecific,omitempty"`
	// CoreGroupAliases are spellings of the core API group the implementation reads as ""
	// in a target reference and in a reference field's group (NGINX Gateway Fabric: "core").
	CoreGroupAliases []string `json:"coreGroupAliases,omitempty"`
	// CrossNamespaceTargets allows targetRefs[].namespace, subject to a ReferenceGrant.
	CrossNamespaceTargets bool `json:"crossNamespaceTargets,omitempty"`
	// TargetNamespace is TargetNamespaceForbidden where the kind's CRD refuses any namespace
	// in a target reference, even the policy's own (Istio: self.size() == 0, "cross
	// namespace referencing is not currently supported"); empty: the own namespace may be
	// named, another one only with CrossNamespaceTargets.
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// UniqueSectionPerTarget applies BackendTLSPolicy's two sectionName rules: two refs to
	// one target must both set sectionName, and to different values.
	UniqueSectionPerTarget bool         `json:"uniqueSectionPerTarget,omitempty"`
	Targets                []TargetKind `json:"targets"`
	// TargetKindSets, when set, are the sets of target kinds a policy's references may be
	// drawn from: all from one set (NGINX Gateway Fabric: "Cannot mix Gateway kind with
	// HTTPRoute or GRPCRoute kinds"; "All TargetRefs must be the same Kind").
	TargetKindSets [][]string `json:"targetKindSets,omitempty"`
	// EffectiveTarget is the kind whose behaviour the policy finally augments.
	EffectiveTarget string `json:"effectiveTarget,omitempty"`

	// Conflicts says when two policies of the kind at one attachment point conflict.
	Conflicts Conflicts `json:"conflicts,omitempty"`
	// Order is which of two policies at one attachment point the implementation lets win
	// where they overlap (explain and impact predict it): gep (the default: the older ranks
	// higher, so of two defaults the newer wins, of two overrides the older) or oldestWins
	// (the older wins either way) or nameFirst (the first by namespace/name wins, whatever
	// their ages: Envoy AI Gateway's QuotaPolicy).
	Order Order `json:"order,omitempty"`

	Stanzas  Stanzas  `json:"stanzas,omitempty"`
	Strategy Strategy `json:"strategy,omitempty"`
	// FieldTargets are the spec fields a policy may set only when every one of its targets
	// is of some kinds: a CEL rule of the kind's CRD ties the field to them (Envoy Gateway's
	// "admissionControl can only be used with HTTPRoute, GRPCRoute, Gateway, or ListenerSet
	// targets"). The strategy field's own rule is Strategy.TargetKinds.
	FieldTargets []FieldTarget `json:"fieldTargets,omitempty"`
	NamedRules   []string      `json:"namedRules,omitempty"`
	References   []Reference   `json:"references,omitempty"`

	// Implementations name the implementations (the file's implementations entries) whose
	// controllers act on the kind's policies, each only through the Gateways of its own
	// GatewayClasses. Empty: every controller (Gateway API's own kinds, a kind known only
	// from its CRD label, or one whose implementation refuses whatever the class).
	Implementations []string `json:"implementations,omitempty"`
	serving         Serving

	// StatusConditions says how to read what the implementation writes into a policy's
	// status, to compare it with the prediction (empty: Gateway API's PolicyAncestorStatus
	// semantics).
	StatusConditions StatusConditions `json:"statusConditions,omitempty"`

	// Source says where the row came from (builtin, config file, CRD discovery).
	Source string `json:"-"`

	// ReadAt names the release of the kind's implementation its facts were read at
	// ("envoyproxy/gateway v1.9.1"): what a drift from the CRD a cluster runs is measured
	// against, and what its warnings cite.
	ReadAt string `json:"readAt,omitempty"`
	// Installed is set only on a row derived from the CRD a cluster runs (crd_drift.go): that
	// CRD, where it differs from the row it was derived from, and that row.
	Installed *InstalledCRD `json:"-"`
}

// ConflictMode says when two policies of a kind at one attachment point (same target, same
// section) conflict: when the implementation's outcome between them would depend on
// creation order alone.
type ConflictMode string

const (
	// ConflictsNone: any second policy conflicts (GEP-713 merge strategy None; the
	// default of Direct kinds).
	ConflictsNone ConflictMode = "none"
	// ConflictsValue: both set the same setting, in the same stanza class, to different
	// values (the default of Inherited kinds, and of every kind known only from its label).
	ConflictsValue ConflictMode = "value"
	// ConflictsPresence: both set the same setting, whatever its value.
	ConflictsPresence ConflictMode = "presence"
	// ConflictsFields: both set one of the listed fields, whatever its value.
	ConflictsFields ConflictMode = "fields"
	// ConflictsNever: every policy at a point applies together.
	ConflictsNever ConflictMode = "never"
	// ConflictsKey: every policy applies on its own, as in mode never, except that at one
	// attachment point the implementation accepts one policy per key (Conflicts.Key), the
	// first in the row's order: a second with the same key conflicts (AWS's AccessLogPolicy:
	// one access log subscription per target and destination type).
	ConflictsKey ConflictMode = "key"
)

var conflictModes = []ConflictMode{ConflictsNone, ConflictsValue, ConflictsPresence, ConflictsFields, ConflictsNever, ConflictsKey}

// Conflicts is how a kind's policies at one attachment point relate.
type Conflicts struct {
	Mode ConflictMode `json:"mode,omitempty"`
	// Fields are the spec fields (dotted paths inside a block) that conflict in mode fields.
	Fields []string `json:"fields,omitempty"`
	// Granularity is the strategy whose units are compared in modes value and presence:
	// atomic (the whole block), patch (each scalar) or merge (each named rule). Empty: the
	// coarser of the two blocks' strategies.
	Granularity string `json:"granularity,omitempty"`
	// OrderAnnotation and OrderField name where the implementation reads the rank it orders
	// two policies at one point by (kgateway's kgateway.dev/policy-weight annotation, Envoy
	// Gateway's EnvoyPatchPolicy spec.priority): policies of different ranks never conflict,
	// the rank decides between them. At most one is set; OrderField is a top-level spec field.
	OrderAnnotation string `json:"orderAnnotation,omitempty"`
	OrderField      string `json:"orderField,omitempty"`
	// Key is what the policies of mode key are told apart by.
	Key *ConflictKey `json:"key,omitempty"`
}

// ConflictKey derives a policy's key from a spec field: the part of its string value that
// Pattern's first group captures, or the whole value without a pattern. A policy whose field
// is absent, not a string, or not matched has no key and conflicts with none: the webhook
// denies only what it can tell apart as the implementation does.
type ConflictKey struct {
	// Field is the dotted path of the field below spec.
	Field string `json:"field"`
	// Pattern is an RE2 expression with one capturing group (AWS: the service of an ARN,
	// ^arn:[^:]+:([^:]+):).
	Pattern string `json:"pattern,omitempty"`
	// Name says what the key is, in messages ("destination type").
	Name string `json:"name"`

	// compiled is Pattern, compiled when the table loads (a pointer: copies of the row share it).
	compiled *regexp.Regexp
}

// Of returns the key of a policy whose spec is spec, and whether it has one.
func (k *ConflictKey) Of(spec map[string]any) (string, bool) {
	var v any = spec
	for _, seg := range strings.Split(k.Field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[seg]
	}
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	if k.Pattern == "" {
		return s, true
	}
	re := k.compiled
	if re == nil {
		var err error
		if re, err = regexp.Compile(k.Pattern); err != nil {
			return "", false
		}
	}
	m := re.FindStringSubmatch(s)
	if len(m) < 2 {
		return "", false
	}
	return m[1], true
}

// compile checks the key and compiles its pattern.
func (k *ConflictKey) compile() error {
	if k.Field == "" || k.Name == "" {
		return fmt.Errorf("conflicts.key must name a field and say what the key is (name)")
	}
	if k.Pattern == "" {
		return nil
	}
	re, err := regexp.Compile(k.Pattern)
	if err != nil {
		return fmt.Errorf("conflicts.key.pattern: %w", err)
	}
	if re.NumSubexp() < 1 {
		return fmt.Errorf("conflicts.key.pattern %q must have a capturing group", k.Pattern)
	}
	k.compiled = re
	return nil
}

// Order is how an implementation ranks two policies at one attachment point.
type Order string

const (
	// OrderGEP is GEP-713's: the older creationTimestamp ranks higher, then
	// {namespace}/{name}; a higher default yields to a lower one, a higher override wins.
	OrderGEP Order = "gep"
	// OrderOldestWins: the older policy's settings win at one attachment point, defaults
	// and overrides alike.
	OrderOldestWins Order = "oldestWins"
	// OrderNameFirst: the policy whose namespace/name sorts first wins at one attachment
	// point, whatever the creation order (Envoy AI Gateway's QuotaPolicy controller,
	// getMergedConfigsLocked). A tie so broken never depends on creation order.
	OrderNameFirst Order = "nameFirst"
)

// TargetKind is one kind a policy may target.
type TargetKind struct {
	Group   string      `json:"group"`
	Kind    string      `json:"kind"`
	Section SectionKind `json:"section,omitempty"`
	// FromNamespace lets a namespaced policy target this cluster-scoped kind, which GEP-713
	// reserves for cluster-scoped policies, where the implementation allows it (Envoy
	// Gateway's EnvoyPatchPolicy on a GatewayClass whose Gateways it merges).
	FromNamespace bool `json:"fromNamespace,omitempty"`
	// OnlyFromNamespace, when set, is the one namespace from which the implementation applies
	// a policy on this target (Istio: a GatewayClass target, from its root namespace). A
	// policy elsewhere is stored and ignored: a warning, never a denial, since the namespace
	// may be configured otherwise.
	OnlyFromNamespace *NamespaceSetting `json:"onlyFromNamespace,omitempty"`
}

// NamespaceSetting is a namespace the implementation reads from its own configuration.
type NamespaceSetting struct {
	// Namespace is its default.
	Namespace string `json:"namespace"`
	// Configurable names the setting that changes it (the webhook cannot read it).
	Configurable string `json:"configurable,omitempty"`
}

// Stanzas names the spec fields that hold each kind of rule block.
type Stanzas struct {
	// Bare lists the spec fields that make up bare rules (implicit atomic defaults).
	// Empty means every spec field that is not a target, stanza or strategy field.
	Bare      []string `json:"bare,omitempty"`
	Defaults  []string `json:"defaults,omitempty"`
	Overrides []string `json:"overrides,omitempty"`
	// Remove names the field listing named default rules a lower policy deactivates
	// (Kuadrant RFC, Examples F); empty when the kind has none.
	Remove string `json:"remove,omitempty"`
	// AllowDefaultsWithOverrides opts in to Kuadrant's earlier behaviour where one
	// instance may carry both blocks. GEP-713 Standard forbids it; default is strict.
	AllowDefaultsWithOverrides bool `json:"allowDefaultsWithOverrides,omitempty"`
	// ClassBy, when set, makes the bare rules an overrides block when a spec field holds one
	// of the listed values (agentgateway's strategy.inheritance: Override locks a setting
	// against every more specific level); otherwise they stay defaults.
	ClassBy *ClassBy `json:"classBy,omitempty"`
}

// FieldValues is a top-level spec field and values of it.
type FieldValues struct {
	Field  string   `json:"field"`
	Values []string `json:"values"`
}

// ClassBy names the spec field (dotted) whose value classes a policy's bare rules, and the
// values that make them overrides.
type ClassBy struct {
	Field     string   `json:"field"`
	Overrides []string `json:"overrides"`
}

// Strategy describes the field an instance uses to choose its merge strategy.
type Strategy struct {
	// Field is the field name, looked up at spec level and inside each stanza block.
	Field string `json:"field,omitempty"`
	// Values maps each allowed field value to a canonical strategy (atomic|patch|merge).
	Values map[string]string `json:"values,omitempty"`
	// Default is the canonical strategy when the field is absent.
	Default string `json:"default,omitempty"`
	// DeclaredBy says which policy of a pair on one path dictates how they merge: higher
	// (GEP-713, the default) or lower (Envoy Gateway's mergeType: a route's policy says how
	// it merges into its Gateway's; without it, the most specific policy wins whole).
	DeclaredBy string `json:"declaredBy,omitempty"`
	// TargetKinds, when set, are the only target kinds a policy that sets Field may have
	// (Envoy Gateway: mergeType "can only be used with xRoute targets").
	TargetKinds []string `json:"targetKinds,omitempty"`
	// ListKeys names the lists (dotted paths inside a block) whose items merge one by one,
	// each item known by the values of its key fields (a Kubernetes strategic merge patch's
	// patchMergeKey: Envoy Gateway's compression by type). Other lists are one value whole.
	ListKeys map[string][]string `json:"listKeys,omitempty"`
	// WholeLists are the values of Field whose blocks replace lists whole even where
	// ListKeys names them (Envoy Gateway's JSONMerge: RFC 7386 replaces arrays).
	WholeLists []string `json:"wholeLists,omitempty"`
}

// ListKeysFor returns the keyed lists a block merges by, given the value of its strategy
// field ("" when it sets none).
func (s *Strategy) ListKeysFor(value string) map[string][]string {
	if slices.Contains(s.WholeLists, value) {
		return nil
	}
	return s.ListKeys
}

// FieldTarget is one spec field a policy may set only on some target kinds.
type FieldTarget struct {
	// Field is the dotted path of the field below spec ("admissionControl").
	Field string `json:"field"`
	// TargetKinds are the only target kinds a policy that sets Field may name, by
	// reference or by selector. Kinds are compared by name alone, whatever the group, as
	// the CRDs' rules compare them (ref.kind in ['Gateway', ...]).
	TargetKinds []string `json:"targetKinds"`
}

// FieldTargetKinds returns the only target kinds a policy that sets the spec field field
// may have, from the row's FieldTargets or its strategy field's rule; ok is false when no
// rule ties the field to target kinds.
func (r *KindRow) FieldTargetKinds(field string) (kinds []string, ok bool) {
	if field != "" && field == r.Strategy.Field && len(r.Strategy.TargetKinds) > 0 {
		return r.Strategy.TargetKinds, true
	}
	for _, ft := range r.FieldTargets {
		if ft.Field == field {
			return ft.TargetKinds, true
		}
	}
	return nil, false
}

// Which policy of a pair declares the strategy they merge by.
const (
	DeclaredByHigher = "higher"
	DeclaredByLower  = "lower"
)

// TargetNamespaceForbidden: a target reference may name no namespace at all.
const TargetNamespaceForbidden = "forbidden"

// Reference shapes: how a reference field is decoded.
const (
	// ObjectReferenceShape is Gateway API's SecretObjectReference / LocalObjectReference:
	// group, kind, name and (if the row allows) namespace.
	ObjectReferenceShape = "ObjectReference"
	// IssuerReferenceShape is cert-manager's IssuerReference: name, kind, group; no namespace.
	IssuerReferenceShape = "IssuerReference"
	// NameNamespaceShape is an object of a name and an optional namespace, whose group and
	// kind are fixed (DefaultGroup, DefaultKind): NGINX Gateway Fabric's APPolicyReference,
	// kgateway's SecretRefWithKey and NamespacedObjectReference. A group or kind written in it
	// is not read (the API server prunes it).
	NameNamespaceShape = "NameNamespace"
)

// What an implementation does with a reference into another namespace (Reference.CrossNamespace).
const (
	// CrossNamespaceGrant: it follows the reference only where a ReferenceGrant in the
	// referent's namespace admits it (GEP-709), and refuses the policy otherwise.
	CrossNamespaceGrant = "grant"
	// CrossNamespaceFree: it follows the reference without asking for a grant.
	CrossNamespaceFree = "free"
	// CrossNamespaceIgnored: it reads the referent from the policy's own namespace whatever
	// the reference names; another namespace is warned about, never denied.
	CrossNamespaceIgnored = "ignored"
)

// Reference is a spec field that names another object (a Secret, a ConfigMap, an Issuer).
type Reference struct {
	// Shape is how the field decodes: ObjectReference (default) or IssuerReference.
	Shape string `json:"shape,omitempty"`
	// Path is the dotted path below spec; a segment ending in "[]" is a list.
	Path string `json:"path"`
	// DefaultGroup and DefaultKind apply when the reference omits them.
	DefaultGroup string `json:"defaultGroup,omitempty"`
	DefaultKind  string `json:"defaultKind,omitempty"`
	// Kinds restricts the kinds the reference may name; empty allows any.
	Kinds []string `json:"kinds,omitempty"`
	// OtherKindsImplementationSpecific admits, with an ImplementationSpecific warning, a kind
	// outside Kinds: the CRD accepts any kind, and which others work is up to the
	// implementation (BackendTLSPolicy's caCertificateRefs: "other kinds of resources" are
	// implementation-specific; Envoy Gateway reads ClusterTrustBundle).
	OtherKindsImplementationSpecific bool `json:"otherKindsImplementationSpecific,omitempty"`
	// ClusterScopedKinds are kinds that live outside namespaces (ClusterIssuer).
	ClusterScopedKinds []string `json:"clusterScopedKinds,omitempty"`
	// Namespaced says the reference may carry a namespace (cross-namespace with a grant).
	Namespaced bool `json:"namespaced,omitempty"`
	// CrossNamespace, where Namespaced, says what the implementation does with another
	// namespace: grant (the default), free or ignored.
	CrossNamespace string `json:"crossNamespace,omitempty"`
	// GrantModes, with CrossNamespace grant, are the ReferenceGrant modes of the row's
	// implementations (their referenceGrants.mode) in which the grant is needed; in another
	// mode the reference crosses namespaces freely (kgateway: a Secret in every mode but
	// OFF, a GatewayExtension only in STRICT). Empty: in every mode.
	GrantModes []string `json:"grantModes,omitempty"`
}

// GroupKind returns the row's GroupKind.
func (r *KindRow) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// Target returns the target entry for group/kind, if the kind may target it.
func (r *KindRow) Target(group, kind string) (TargetKind, bool) {
	for _, t := range r.Targets {
		if t.Group == group && t.Kind == kind {
			return t, true
		}
	}
	return TargetKind{}, false
}

// TargetKinds lists the allowed target kinds for messages, as "group/Kind" (or "Kind" for core).
func (r *KindRow) TargetKinds() []string {
	out := make([]string, 0, len(r.Targets))
	for _, t := range r.Targets {
		out = append(out, QualifiedKind(t.Group, t.Kind))
	}
	return out
}

// MaxRefs is the effective cap on targetRefs: the CRD's maxItems, or no cap (math.MaxInt)
// where the CRD sets none. The doors bound what a policy of any size costs them on their
// own (the review door's body and memory bounds, the mutating door's cap on predictions).
func (r *KindRow) MaxRefs() int {
	if r.MaxTargetRefs > 0 {
		return r.MaxTargetRefs
	}
	return math.MaxInt
}

// CoreGroup returns group as the kind's implementation reads it in a target reference: ""
// for one of the row's CoreGroupAliases, group otherwise.
func (r *KindRow) CoreGroup(group string) string {
	if group != "" && slices.Contains(r.CoreGroupAliases, group) {
		return ""
	}
	return group
}

// StrategyValues lists the allowed strategy field values, sorted for stable messages.
func (r *KindRow) StrategyValues() []string {
	out := make([]string, 0, len(r.Strategy.Values))
	for v := range r.Strategy.Values {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// ServesVersion reports whether the kind is served at version.
func (r *KindRow) ServesVersion(version string) bool {
	return len(r.Versions) == 0 || slices.Contains(r.Versions, version)
}

// HasTargetRefField reports whether the kind takes its targets in spec.<name>.
func (r *KindRow) HasTargetRefField(name string) bool {
	return slices.Contains(r.TargetRefFields, name)
}
