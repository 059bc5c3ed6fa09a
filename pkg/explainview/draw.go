package explainview

import (
	"fmt"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// drawing is the graph as DOT and Mermaid both draw it, in the order they write it, each
// node and policy named by the short identifier both languages give it (n0, n1... and p0...).
type drawing struct {
	nodes []drawnNode
	// edges join two node identifiers, the upper first.
	edges [][2]string
	// attached are the policies some attachment names; unattached those on no path shown
	// (NoTargets, or every path they reach left out), drawn apart.
	attached, unattached []drawnPolicy
	// arrows join a policy to a node it attaches at.
	arrows []arrow
}

type drawnNode struct {
	id string
	Node
}

type drawnPolicy struct {
	id string
	impact.PolicyStatus
}

// arrow joins policy from to node to, with the stanza class it brings there.
type arrow struct{ from, to, class string }

type policyKey struct{ kind, namespace, name string }

func drawingOf(g Graph) drawing {
	var d drawing
	node := make(map[string]string, len(g.Nodes))
	for i, n := range g.Nodes {
		node[n.ID] = fmt.Sprintf("n%d", i)
		d.nodes = append(d.nodes, drawnNode{id: node[n.ID], Node: n})
	}
	for _, e := range g.Edges {
		d.edges = append(d.edges, [2]string{node[e.From], node[e.To]})
	}
	policy := make(map[policyKey]string, len(g.Policies))
	for i, p := range g.Policies {
		policy[policyKey{p.Kind, p.Namespace, p.Name}] = fmt.Sprintf("p%d", i)
	}
	attached := map[string]bool{}
	for _, a := range g.Attachments {
		from, ok := policy[policyKey{a.Kind, a.Namespace, a.Name}]
		if !ok {
			continue
		}
		attached[from] = true
		d.arrows = append(d.arrows, arrow{from: from, to: node[a.Node], class: a.Class})
	}
	for _, p := range g.Policies {
		dp := drawnPolicy{id: policy[policyKey{p.Kind, p.Namespace, p.Name}], PolicyStatus: p}
		if attached[dp.id] {
			d.attached = append(d.attached, dp)
		} else {
			d.unattached = append(d.unattached, dp)
		}
	}
	return d
}
