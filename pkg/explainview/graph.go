package explainview

import (
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Graph is the hierarchy the shown paths walk, with the shown policies and where they
// attach: what DOT and Mermaid draw.
type Graph struct {
	// Nodes are the attachment points, in the order the paths first reach them.
	Nodes []Node
	// Edges join a node to the one below it on some path (parent first).
	Edges []Edge
	// Policies are the explanation's policies, in its order.
	Policies []impact.PolicyStatus
	// Attachments join a policy to a node, with the stanza class it brings there.
	Attachments []Attachment

	// ex is the explanation drawn: its paths place the nodes and carry the winners.
	ex impact.Explanation
	// reach lists, for each policy, the paths (indexes into ex.Paths) it attaches on.
	reach map[policyKey][]int
	// index finds a node by its ID.
	index map[string]int
}

// graphOf is the graph of an explanation with everything the page needs: where each
// policy attaches, and the paths it attaches on.
func graphOf(snap topology.State, ex impact.Explanation) Graph {
	attached, reach := attachments(snap, ex)
	g := BuildGraph(ex, attached)
	g.reach = reach
	return g
}

// Node is one attachment point of the hierarchy.
type Node struct {
	// ID is the node's identity: the path element ("Gateway infra/gw", "HTTPRoute app/r"),
	// or for a section, its owner's identity and the element ("Gateway infra/gw > Listener
	// http"): a route reached through two listeners is one node.
	ID string
	// Label is the path element as explain prints it ("Listener http").
	Label string
	// Level is the node's place in the hierarchy: GatewayClass, Namespace, Gateway,
	// ListenerSet, Listener, Route, Rule, Backend or Port.
	Level string
}

// Edge joins two nodes, From above To.
type Edge struct{ From, To string }

// Attachment says that a policy applies at a node, with one stanza class.
type Attachment struct {
	// Kind, Namespace and Name name the policy as the explanation does.
	Kind, Namespace, Name string
	// Node is the ID of the node the policy attaches at.
	Node string
	// Above is set for a node off the paths (a GatewayClass or Namespace): the ID of the
	// Gateway node it sits above.
	Above string
	// Class is "defaults" or "overrides" (bare rules count as defaults unless the kind
	// says otherwise), or empty for a policy with no rules.
	Class string
}

// BuildGraph lays out the nodes and edges of the explanation's paths, its policies, and
// the attachments that land on those nodes (others are dropped: the graph never shows an
// object the explanation does not).
func BuildGraph(ex impact.Explanation, attachments []Attachment) Graph {
	g := Graph{Policies: ex.Policies, ex: ex}
	index := map[string]int{}
	edges := map[Edge]bool{}
	addNode := func(n Node) {
		if _, ok := index[n.ID]; !ok {
			index[n.ID] = len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
		}
	}
	addEdge := func(e Edge) {
		if !edges[e] {
			edges[e] = true
			g.Edges = append(g.Edges, e)
		}
	}
	for _, p := range ex.Paths {
		ids := ElementIDs(p.Path)
		for i, id := range ids {
			addNode(Node{ID: id, Label: p.Path[i], Level: level(p.Path[i])})
			if i > 0 {
				addEdge(Edge{From: ids[i-1], To: id})
			}
		}
	}
	g.index = index
	seen := map[Attachment]bool{}
	for _, a := range attachments {
		if seen[a] {
			continue
		}
		if a.Above != "" {
			if _, ok := index[a.Above]; !ok {
				continue
			}
			addNode(Node{ID: a.Node, Label: a.Node, Level: level(a.Node)})
			addEdge(Edge{From: a.Node, To: a.Above})
		} else if _, ok := index[a.Node]; !ok {
			continue
		}
		seen[a] = true
		g.Attachments = append(g.Attachments, a)
	}
	return g
}

// sectionLevels are the path elements that are a section of the element before them.
var sectionLevels = []string{"Listener", "Rule", "Port"}

// ElementIDs returns the node identity of each element of a path as explain prints it:
// an object is itself ("HTTPRoute app/r"), a section its owner's identity and itself
// ("Gateway infra/gw > Listener http").
func ElementIDs(path []string) []string {
	ids := make([]string, len(path))
	for i, e := range path {
		ids[i] = e
		if i > 0 && isSection(e) {
			ids[i] = ids[i-1] + " > " + e
		}
	}
	return ids
}

func isSection(element string) bool {
	word, _, _ := strings.Cut(element, " ")
	for _, l := range sectionLevels {
		if word == l {
			return true
		}
	}
	return false
}

// level names an element's place in the hierarchy from its first word.
func level(element string) string {
	word, _, _ := strings.Cut(element, " ")
	switch {
	case isSection(element), word == "Gateway", word == "ListenerSet", word == "GatewayClass", word == "Namespace":
		return word
	case strings.HasSuffix(word, "Route"):
		return "Route"
	}
	return "Backend"
}
