package explainview

import (
	"cmp"
	"fmt"
	"slices"

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
	// column is the node's column in the layout, a rank in DOT.
	column int
}

// ranks lists the drawing's nodes column by column (columns with one node left out: a
// rank of one constrains nothing).
func (d drawing) ranks() [][]string {
	byColumn := map[int][]string{}
	var columns []int
	for _, n := range d.nodes {
		if _, ok := byColumn[n.column]; !ok {
			columns = append(columns, n.column)
		}
		byColumn[n.column] = append(byColumn[n.column], n.id)
	}
	slices.Sort(columns)
	var out [][]string
	for _, c := range columns {
		if len(byColumn[c]) > 1 {
			out = append(out, byColumn[c])
		}
	}
	return out
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
	// Nodes and edges in the page's layout order (group by group, column by column, top
	// to bottom), and the columns as ranks, so DOT, Mermaid and the page agree.
	layout := LayOut(g)
	node := make(map[string]string, len(g.Nodes))
	order := make(map[string]int, len(g.Nodes))
	for _, grp := range layout.Groups {
		for _, n := range grp.Nodes {
			if _, ok := node[n.ID]; ok {
				continue // a GatewayClass or Namespace above Gateways of several groups
			}
			order[n.ID] = len(d.nodes)
			node[n.ID] = fmt.Sprintf("n%d", len(d.nodes))
			d.nodes = append(d.nodes, drawnNode{id: node[n.ID], Node: n.Node, column: n.Column})
		}
	}
	edges := slices.Clone(g.Edges)
	slices.SortStableFunc(edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(order[a.From], order[b.From]), cmp.Compare(order[a.To], order[b.To]))
	})
	for _, e := range edges {
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
