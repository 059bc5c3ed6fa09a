package explainview

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// layOutGroup orders and places one group's nodes and its paths' entries (a last column
// whose boxes hang from the paths' last nodes; entries holds their leaves as graph node
// indexes, and comes back with them as indexes into the group's Nodes).
func layOutGroup(g Graph, nodes []int, entries []Entry, badges [][]Badge, nodePaths [][]int, colX, widths []int, entryX, entryW int) Group {
	// Local indexes: the group's nodes first, then its entries.
	k := len(nodes)
	local := make(map[int]int, k)
	for i, n := range nodes {
		local[n] = i
	}
	total := k + len(entries)
	column := make([]int, total)
	height := make([]int, total)
	parents := make([][]int, total)
	children := make([][]int, total)
	for i, n := range nodes {
		column[i] = columnOf(g.Nodes[n].Level)
		height[i] = nodeHead
		if len(badges[n]) > 0 {
			height[i] += len(badges[n])*(badgeH+badgeGap) + nodePad - badgeGap
		}
	}
	for _, e := range g.Edges {
		f, okF := local[index(g, e.From)]
		t, okT := local[index(g, e.To)]
		if okF && okT {
			children[f] = append(children[f], t)
			parents[t] = append(parents[t], f)
		}
	}
	for j, e := range entries {
		i := k + j
		column[i] = len(columnLevels)
		height[i] = entryH
		leaf := local[e.Leaf]
		parents[i] = []int{leaf}
		children[leaf] = append(children[leaf], i)
	}
	cols := make([][]int, len(columnLevels)+1)
	for i := range total { // nodes in the order the paths first reach them, entries in path order
		cols[column[i]] = append(cols[column[i]], i)
	}

	// Order each column by the mean position of the boxes it hangs from (then of those
	// hanging from it), a few sweeps: the barycentre heuristic of layered drawing. Ties
	// keep the order the paths reach the nodes, so the layout is the same on every run.
	pos := make([]float64, total)
	for _, col := range cols {
		for i, n := range col {
			pos[n] = float64(i)
		}
	}
	sweep := func(c int, neighbours [][]int) {
		key := make(map[int]float64, len(cols[c]))
		for _, n := range cols[c] {
			key[n] = pos[n]
			if len(neighbours[n]) > 0 {
				sum := 0.0
				for _, m := range neighbours[n] {
					sum += pos[m]
				}
				key[n] = sum / float64(len(neighbours[n]))
			}
		}
		slices.SortStableFunc(cols[c], func(a, b int) int {
			return cmp.Or(cmp.Compare(key[a], key[b]), cmp.Compare(a, b))
		})
		for i, n := range cols[c] {
			pos[n] = float64(i)
		}
	}
	for range 2 {
		for c := range cols {
			sweep(c, parents)
		}
		for c := len(cols) - 1; c >= 0; c-- {
			sweep(c, children)
		}
	}
	for c := range cols {
		sweep(c, parents)
	}

	// Then y: each box as near the centre of the boxes it hangs from as the boxes above it
	// in its column allow (left to right), then as near the centre of those hanging from it
	// (right to left). Stacking in order, a gap apart, keeps boxes from overlapping.
	y := make([]int, total)
	centre := func(n int) int { return y[n] + min(height[n], nodeHead)/2 }
	// A box lines up with the centre of the boxes it hangs from, and with the first of
	// those hanging from it: a Gateway heads its listeners as a folder heads its files,
	// rather than sitting in the middle of a column hundreds of routes tall.
	byParents := func(_ int, ms []int) int {
		sum := 0
		for _, m := range ms {
			sum += centre(m)
		}
		return sum / len(ms)
	}
	byChildren := func(_ int, ms []int) int {
		first := math.MaxInt
		for _, m := range ms {
			first = min(first, centre(m))
		}
		return first
	}
	var want func(int, []int) int
	place := func(c int, neighbours [][]int) {
		cursor := titleH
		for _, n := range cols[c] {
			at := max(cursor, y[n]) // a box with no neighbours this way stays where it was
			if len(neighbours[n]) > 0 {
				at = max(cursor, want(n, neighbours[n])-min(height[n], nodeHead)/2)
			}
			y[n] = at
			gap := rowGap
			if column[n] == len(columnLevels) {
				gap = entryGap
			}
			cursor = at + height[n] + gap
		}
	}
	want = byParents
	for c := range cols {
		place(c, parents)
	}
	want = byChildren
	for c := len(cols) - 1; c >= 0; c-- {
		place(c, children)
	}
	// The sweeps may leave room above every column: the drawing starts under the titles.
	top := math.MaxInt
	for i := range total {
		top = min(top, y[i])
	}
	for i := range total {
		y[i] -= top - titleH
	}

	var grp Group
	at := make([]int, k) // local index -> index in grp.Nodes, column by column
	for c := range columnLevels {
		for _, i := range cols[c] {
			n := nodes[i]
			at[i] = len(grp.Nodes)
			pn := PlacedNode{Node: g.Nodes[n], Column: c, Box: Box{X: colX[c], Y: y[i], W: widths[c], H: height[i]},
				Badges: slices.Clone(badges[n]), Paths: nodePaths[n]}
			for j := range pn.Badges {
				pn.Badges[j].Box = Box{X: pn.X + nodePad, Y: pn.Y + nodeHead + j*(badgeH+badgeGap), W: pn.W - 2*nodePad, H: badgeH}
			}
			grp.Nodes = append(grp.Nodes, pn)
			grp.Height = max(grp.Height, pn.Y+pn.H)
			if pn.Level == "Route" {
				grp.Routes++
			}
		}
	}
	for _, i := range cols[len(columnLevels)] {
		e := entries[i-k]
		e.Leaf = at[local[e.Leaf]]
		e.Box = Box{X: entryX, Y: y[i], W: entryW, H: entryH}
		grp.Entries = append(grp.Entries, e)
		grp.Height = max(grp.Height, e.Y+e.H)
	}
	grp.Height += margin
	// The title: the group's Gateways, or its first node.
	var roots []string
	for _, n := range grp.Nodes {
		if n.Level == "Gateway" {
			roots = append(roots, n.Label)
		}
	}
	if len(roots) == 0 {
		roots = append(roots, g.Nodes[nodes[0]].Label)
	}
	grp.Title = strings.Join(roots, ", ")
	return grp
}

// maxGroupRoutes is the most routes one drawing holds before it is cut by namespace.
const maxGroupRoutes = 40

// pathNamespace is the namespace of a path's route, or of its first object that has one.
func pathNamespace(path []string) string {
	first := ""
	for _, e := range path {
		ns, ok := namespaceOf(e)
		if !ok {
			continue
		}
		if level(e) == "Route" {
			return ns
		}
		if first == "" {
			first = ns
		}
	}
	return first
}

// index finds a node of the graph by its ID.
func index(g Graph, id string) int {
	if g.index == nil {
		return slices.IndexFunc(g.Nodes, func(n Node) bool { return n.ID == id })
	}
	return g.index[id]
}

func appendOnce(list []int, v int) []int {
	if len(list) > 0 && list[len(list)-1] == v {
		return list
	}
	return append(list, v)
}
