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
	return nil
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
