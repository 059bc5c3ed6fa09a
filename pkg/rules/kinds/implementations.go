package kinds

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Implementation is a controller that acts on policies: the GatewayClasses it serves, by
// their spec.controllerName. A controller acts only on the Gateways of its own classes
// (Envoy Gateway's provider loads only the GatewayClasses it manages; NGINX Gateway Fabric
// keeps the Gateways of its one class), so a policy of its kinds reached through another
// class's Gateway takes no effect there: it makes no conflict and has no impact.
type Implementation struct {
	// Name is how rows and config files refer to it ("envoy-gateway").
	Name string `json:"name"`
	// Title is how messages name it ("Envoy Gateway"); Name when empty.
	Title string `json:"title,omitempty"`
	// ControllerNames are the GatewayClass controllerName values of the classes it serves;
	// none for an implementation that never acts through a Gateway (a mesh: Linkerd).
	ControllerNames []string `json:"controllerNames"`
	// Setting names where an installation changes them: the webhook cannot read it, so a
	// config file's implementations entry says it instead.
	Setting string `json:"setting,omitempty"`
	// ReferenceGrants is how it reads ReferenceGrants, where that differs from GEP-709's
	// letter; nil: exactly as written, in every installation.
	ReferenceGrants *GrantReading `json:"referenceGrants,omitempty"`
}

// GrantReading is how an implementation reads ReferenceGrants.
type GrantReading struct {
	// CoreGroupAliases are spellings of the core API group it reads as "" in a grant's from
	// and to groups (NGINX Gateway Fabric's newReferenceGrantResolver, kgateway's
	// emptyIfCore: both read "core").
	CoreGroupAliases []string `json:"coreGroupAliases,omitempty"`
	// Modes are the grant modes an installation may choose, and Mode the one it runs: the
	// default in the built-in table; where an installation chose another, a config file's
	// entry says so (the webhook cannot read the implementation's settings). A reference's
	// grantModes say in which modes it needs a grant.
	Modes []string `json:"modes,omitempty"`
	Mode  string   `json:"mode,omitempty"`
	// ModeSetting names where an installation chooses its mode.
	ModeSetting string `json:"modeSetting,omitempty"`
}

// title is how messages name the implementation.
func (i *Implementation) title() string {
	if i.Title != "" {
		return i.Title
	}
	return i.Name
}

// validate reports an entry that cannot work.
func (i *Implementation) validate() error {
	var problems []string
	if i.Name == "" {
		problems = append(problems, "name is required")
	}
	for _, c := range i.ControllerNames {
		// GatewayClass: "a domain prefixed path" (apis/v1 GatewayController).
		if domain, path, ok := strings.Cut(c, "/"); !ok || domain == "" || path == "" {
			problems = append(problems, fmt.Sprintf("controller name %q must be a domain-prefixed path (example.net/gateway-controller)", c))
		}
	}
	if g := i.ReferenceGrants; g != nil && (len(g.Modes) > 0 || g.Mode != "") && !slices.Contains(g.Modes, g.Mode) {
		problems = append(problems, fmt.Sprintf("referenceGrants.mode %q must be one of referenceGrants.modes (%s)", g.Mode, strings.Join(g.Modes, ", ")))
	}
	if len(problems) > 0 {
		return fmt.Errorf("implementation %q: %s", i.Name, strings.Join(problems, "; "))
	}
	return nil
}

// Serving is what a row knows of the controllers that act on its kind: resolved from its
// Implementations when the table loads.
type Serving struct {
	implementations []Implementation
}

// Scoped reports whether the kind is acted on by some controllers only. A kind whose row
// names no implementation (Gateway API's own kinds, kinds known only from their CRD label)
// is taken to be served on every Gateway.
func (r *KindRow) Scoped() bool { return len(r.Implementations) > 0 }

// Serves reports whether a controller of the kind acts on the Gateways of a GatewayClass
// whose spec.controllerName is controller.
func (r *KindRow) Serves(controller string) bool {
	if !r.Scoped() {
		return true
	}
	for _, impl := range r.serving.implementations {
		if slices.Contains(impl.ControllerNames, controller) {
			return true
		}
	}
	return false
}

// ServedBy describes, for messages, the controllers that act on the kind: `Envoy Gateway's
// "gateway.envoyproxy.io/gatewayclass-controller"`, each implementation's names in the order
// its entry lists them, implementations joined by "and".
func (r *KindRow) ServedBy() string {
	var parts []string
	for _, impl := range r.serving.implementations {
		if len(impl.ControllerNames) == 0 {
			parts = append(parts, impl.title()+", through no Gateway")
			continue
		}
		quoted := make([]string, len(impl.ControllerNames))
		for i, c := range impl.ControllerNames {
			quoted[i] = fmt.Sprintf("%q", c)
		}
		parts = append(parts, fmt.Sprintf("%s's %s", impl.title(), strings.Join(quoted, ", ")))
	}
	return strings.Join(parts, " and ")
}

// ServingImplementations returns the resolved implementations, for listings. Callers must
// not change them.
func (r *KindRow) ServingImplementations() []Implementation { return r.serving.implementations }

// implementationSet is the table's implementations by name.
type implementationSet map[string]Implementation

// put validates entries and adds or replaces them all, or none if any is bad.
func (s implementationSet) put(entries []Implementation, source string) error {
	var errs []string
	for i := range entries {
		if err := entries[i].validate(); err != nil {
			errs = append(errs, fmt.Sprintf("implementations[%d]: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", source, strings.Join(errs, "; "))
	}
	for _, e := range entries {
		e.ControllerNames = slices.Clone(e.ControllerNames)
		s[e.Name] = e
	}
	return nil
}

// resolve fills r's serving from its implementation names; it fails on a name the set
// does not hold.
func (s implementationSet) resolve(r *KindRow) error {
	var missing []string
	var found []Implementation
	for _, name := range r.Implementations {
		impl, ok := s[name]
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", name))
			continue
		}
		found = append(found, impl)
	}
	if len(missing) > 0 {
		return fmt.Errorf("implementations %s are not defined; known: %s", strings.Join(missing, ", "), strings.Join(s.names(), ", "))
	}
	r.serving = Serving{implementations: found}
	return validateGrantModes(r)
}

// validateGrantModes reports a reference whose grantModes no implementation of its row
// can be in: each of the row's implementations must have grant modes, and each mode the
// reference names must be one of theirs.
func validateGrantModes(r *KindRow) error {
	var problems []string
	for _, ref := range r.References {
		if len(ref.GrantModes) == 0 {
			continue
		}
		if len(r.serving.implementations) == 0 {
			problems = append(problems, fmt.Sprintf("reference %s: grantModes need implementations whose referenceGrants have modes", ref.Path))
		}
		for _, impl := range r.serving.implementations {
			if impl.ReferenceGrants == nil || len(impl.ReferenceGrants.Modes) == 0 {
				problems = append(problems, fmt.Sprintf("reference %s: grantModes need referenceGrants.modes on implementation %q", ref.Path, impl.Name))
				continue
			}
			for _, m := range ref.GrantModes {
				if !slices.Contains(impl.ReferenceGrants.Modes, m) {
					problems = append(problems, fmt.Sprintf("reference %s: grant mode %q is not one of implementation %q's (%s)", ref.Path, m, impl.Name, strings.Join(impl.ReferenceGrants.Modes, ", ")))
				}
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// GrantNeeded reports whether a reference into another namespace needs a ReferenceGrant:
// where its implementation follows it only with one, in every mode or in the mode each of
// the row's implementations runs (a denial must hold for every implementation that could
// act on the policy).
func (r *KindRow) GrantNeeded(ref *Reference) bool {
	if ref.CrossNamespace != "" && ref.CrossNamespace != CrossNamespaceGrant {
		return false
	}
	if len(ref.GrantModes) == 0 {
		return true
	}
	for _, impl := range r.serving.implementations {
		if impl.ReferenceGrants == nil || !slices.Contains(ref.GrantModes, impl.ReferenceGrants.Mode) {
			return false
		}
	}
	return len(r.serving.implementations) > 0
}

// GrantMode says, for messages, the grant mode that makes a reference need a grant: its
// implementations' mode and where it is set, or "" where the reference needs one in every
// mode.
func (r *KindRow) GrantMode(ref *Reference) string {
	if len(ref.GrantModes) == 0 {
		return ""
	}
	var parts []string
	for _, impl := range r.serving.implementations {
		if g := impl.ReferenceGrants; g != nil {
			part := fmt.Sprintf("%s's reference grant mode %s", impl.title(), g.Mode)
			if g.ModeSetting != "" {
				part += " (" + g.ModeSetting + ")"
			}
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, " and ")
}

// GrantCoreGroup returns group as the row's implementations read it in a ReferenceGrant:
// "" for a spelling of the core group one of them reads so.
func (r *KindRow) GrantCoreGroup(group string) string {
	if group == "" {
		return ""
	}
	for _, impl := range r.serving.implementations {
		if impl.ReferenceGrants != nil && slices.Contains(impl.ReferenceGrants.CoreGroupAliases, group) {
			return ""
		}
	}
	return group
}

func (s implementationSet) names() []string {
	out := make([]string, 0, len(s))
	for name := range s {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Implementations returns the table's implementations, ordered by name.
func (t *KindTable) Implementations() []Implementation {
	out := make([]Implementation, 0, len(t.implementations))
	for _, name := range t.implementations.names() {
		out = append(out, t.implementations[name])
	}
	return out
}

// PutImplementations adds or replaces implementations (a config file's controller names),
// then resolves every row again: a row that names a replaced implementation serves its new
// controller names. Nothing changes if any entry is bad. Call it before the table is shared.
func (t *KindTable) PutImplementations(entries []Implementation, source string) error {
	if len(entries) == 0 {
		return nil
	}
	next := implementationSet{}
	for name, impl := range t.implementations {
		next[name] = impl
	}
	if err := next.put(entries, source); err != nil {
		return err
	}
	for _, r := range t.rows {
		if err := next.resolve(r); err != nil {
			return fmt.Errorf("%s: kind %s: %w", source, r.GroupKind(), err)
		}
	}
	t.implementations = next
	return nil
}
