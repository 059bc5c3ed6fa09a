package impact

import (
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Explanation is the whole-state view of `webhook explain` (DESIGN.md contract): every
// policy's impact status, and the effective policy of every kind on every context path.
type Explanation struct {
	Policies []PolicyStatus `json:"policies"`
	Paths    []PathEffect   `json:"paths"`
}

// PolicyStatus is one policy's impact over the whole state.
type PolicyStatus struct {
	Kind         string   `json:"kind"`
	Namespace    string   `json:"namespace"`
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	Overrides    []string `json:"overrides"`
	OverriddenBy []string `json:"overriddenBy"`
	// Contexts counts the paths the policy reaches.
	Contexts int `json:"contexts"`
	// Ancestors is the status per ancestor, and under each per target, in GEP-5058's
	// vocabulary (AncestorStatus).
	Ancestors []AncestorStatus `json:"ancestors"`
}

// PathEffect is the effective policy of one kind on one context path, with the policy
// that supplied each setting. Effective is in the policies' own shape (a list merged by key
// is a list, keys as written) and Sources names each setting as merge.Display does
// ("httpUpgrade[type=spdy/3.1].type").
type PathEffect struct {
	Kind      string            `json:"kind"`
	Path      []string          `json:"path"`
	Effective map[string]any    `json:"effective"`
	Sources   map[string]string `json:"sources"`
	// Settings are the settings behind Sources, sorted by name, with their values (the text
	// output prints them one per line).
	Settings []merge.Shown `json:"-"`
}

// Explain computes the explanation. With a target, only paths through it are shown, and
// only the policies on those paths; statuses are always computed over the whole state.
func Explain(snap topology.State, table *kinds.KindTable, target *policy.TargetKey) Explanation {
	ex := Explanation{Policies: []PolicyStatus{}, Paths: []PathEffect{}}
	cache := merge.NewCache()
	all := snap.Policies()
	for _, row := range table.Rows() {
		var policies []*policy.Policy
		for _, p := range all {
			if p.Row.GroupKind() == row.GroupKind() {
				policies = append(policies, p)
			}
		}
		if len(policies) == 0 {
			continue
		}
		var paths []topology.ContextPath
		switch {
		case target != nil:
			paths = topology.PathsThrough(snap, row, *target)
		case row.Class == kinds.Direct:
			seen := map[string]bool{}
			for _, p := range policies {
				for _, c := range topology.PathsOf(snap, p) {
					if id := c.String(); !seen[id] {
						seen[id] = true
						paths = append(paths, c)
					}
				}
			}
		default:
			paths = topology.AllPaths(snap, row)
		}
		shown := map[*policy.Policy]bool{}
		for _, c := range paths {
			e := merge.Fold(snap, row, c, cache)
			for _, p := range e.Policies {
				shown[p] = true
			}
			if e.Empty() {
				continue
			}
			spec, shown := e.Display()
			sources := make(map[string]string, len(shown))
			for _, s := range shown {
				sources[s.Name] = s.Source
			}
			ex.Paths = append(ex.Paths, PathEffect{Kind: row.Kind, Path: c.Strings(), Effective: spec, Sources: sources, Settings: shown})
		}
		for _, p := range policies {
			if target != nil && !shown[p] {
				continue
			}
			var im Impact
			if target != nil {
				im = predictThrough(snap, p, *target, cache)
			} else {
				im = Predict(snap, p, cache)
			}
			if im.Ancestors == nil {
				im.Ancestors = []AncestorStatus{}
			}
			ex.Policies = append(ex.Policies, PolicyStatus{
				Kind: row.Kind, Namespace: p.Namespace, Name: p.Name, Status: im.Status,
				Overrides: im.Overrides, OverriddenBy: im.OverriddenBy, Contexts: im.Contexts,
				Ancestors: im.Ancestors,
			})
		}
	}
	return ex
}
