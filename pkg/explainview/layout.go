package explainview

import (
	"cmp"
	"slices"
	"strings"
)

// Layout is where the picture puts every box: one column per level of the hierarchy
// (fixed, so a layered layout needs no graph library), the hierarchy split into groups
// (the parts no path joins: a Gateway with what hangs off it, or several Gateways that
// share a route or a backend; past maxGroupRoutes routes, cut by the routes' namespace),
// each group's boxes ordered to keep the edges short and
// uncrossed. The HTML page draws it as SVG, one group per foldable section; DOT and Mermaid
// take its columns and order, so the three pictures agree.
type Layout struct {
	// Columns are the levels that hold a node, left to right, then the paths' column.
	Columns []Column
	Groups  []Group
	// Width is the width of every group's drawing.
	Width int
}

// Column is one level's place on the page.
type Column struct {
	Title string
	X, W  int
}

// Group is one connected part of the hierarchy, drawn on its own.
type Group struct {
	// Title names the group's Gateways (or its first nodes, for paths that start below).
	Title string
	Nodes []PlacedNode
	Edges []PlacedEdge
	// Entries are the group's paths, one box each in the last column, with their winners.
	Entries []Entry
	// Routes counts the route nodes, for the group's summary.
	Routes int
	Height int
}

// Box is a rectangle in a group's drawing: X, Y its top left.
type Box struct{ X, Y, W, H int }

// Intersects reports whether two boxes share any point, edges included.
func (b Box) Intersects(o Box) bool {
	return b.X <= o.X+o.W && o.X <= b.X+b.W && b.Y <= o.Y+o.H && o.Y <= b.Y+b.H
}

// Contains reports whether o lies inside b, edges included.
func (b Box) Contains(o Box) bool {
	return o.X >= b.X && o.Y >= b.Y && o.X+o.W <= b.X+b.W && o.Y+o.H <= b.Y+b.H
}

// PlacedNode is a node with its box, its column and the policies attached at it.
type PlacedNode struct {
	Node
	Column int
	Box
	Badges []Badge
	// Paths are the indexes of the paths (in the explanation) through the node.
	Paths []int
}

// Badge is one policy attached at a node.
type Badge struct {
	// Policy indexes the explanation's policies.
	Policy int
	// Classes are the stanza classes it brings here ("defaults", "overrides").
	Classes []string
	Box
}

// PlacedEdge joins two placed nodes of a group, From's right side to To's left side.
type PlacedEdge struct {
	From, To       int // indexes into the group's Nodes
	X1, Y1, X2, Y2 int
	Paths          []int
}

// Entry is one path's box in the last column: its kind and the policies that supplied its
// effective settings (the winners), joined to the path's last node.
type Entry struct {
	Path int
	// Winners index the explanation's policies, in the order of the settings they supply.
	Winners []int
	Box
	// Leaf indexes the group's node the path ends at.
	Leaf int
}

// Metrics of the drawing. Labels are monospace, so their width is known without a font:
// DejaVu Sans Mono's advance is 0.602 em; a little more is allowed.
const (
	labelSize, badgeSize = 12, 10
	labelAdvance         = 0.62 * labelSize
	badgeAdvance         = 0.62 * badgeSize
	nodeHead             = 24
	badgeH, badgeGap     = 17, 3
	nodePad              = 5
	minColumnW           = 100
	maxColumnW           = 250
	columnGap            = 28
	rowGap               = 10
	margin               = 12
	titleH               = 26
	entryH               = 20
	entryGap             = 4
)

// columnLevels lists the levels, left to right: each inner list shares a column.
var columnLevels = []struct {
	title  string
	levels []string
}{
	{"GatewayClass / Namespace", []string{"GatewayClass", "Namespace"}},
	{"Gateway", []string{"Gateway"}},
	{"ListenerSet", []string{"ListenerSet"}},
	{"Listener", []string{"Listener"}},
	{"Route", []string{"Route"}},
	{"Rule", []string{"Rule"}},
	{"Backend", []string{"Backend"}},
	{"Port", []string{"Port"}},
}

// backendColumn is the Backend level's column.
const backendColumn = 6

// pathsTitle heads the last column.
const pathsTitle = "Path: effective policy from"

func columnOf(level string) int {
	for i, c := range columnLevels {
		if slices.Contains(c.levels, level) {
			return i
		}
	}
	return backendColumn // level() names every other element a backend
}

// LayOut places the graph of an explanation; the winners of a path are the policies its
// settings' sources name.
func LayOut(g Graph) Layout {
	ex := g.ex
	nodeIndex := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		nodeIndex[n.ID] = i
	}
	above := func(i int) bool { l := g.Nodes[i].Level; return l == "GatewayClass" || l == "Namespace" }

	// The groups: nodes joined by path edges (a GatewayClass or Namespace above several
	// Gateways joins none of them; it is drawn in each of their groups).
	parent := make([]int, len(g.Nodes))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	children := make([][]int, len(g.Nodes))
	parents := make([][]int, len(g.Nodes))
	for _, e := range g.Edges {
		f, t := nodeIndex[e.From], nodeIndex[e.To]
		children[f] = append(children[f], t)
		parents[t] = append(parents[t], f)
		if !above(f) && !above(t) {
			if a, b := find(f), find(t); a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	// Groups: the parts no path joins, in the order their first node was reached. A part
	// with more than maxGroupRoutes routes is cut by the namespace of each path's route (or
	// of its first object): a namespace's routes are drawn together, a whole cluster is a
	// list of sections to fold, filter or scroll, and a selector policy (which selects in
	// its own namespace) lands in one section. An object on paths of several sections (a
	// Gateway, its listeners) is drawn in each; so is a GatewayClass or Namespace above a
	// Gateway.
	compOrder, compRoutes := map[int]int{}, map[int]int{}
	for i := range g.Nodes {
		if above(i) {
			continue
		}
		r := find(i)
		if _, ok := compOrder[r]; !ok {
			compOrder[r] = len(compOrder)
		}
		if g.Nodes[i].Level == "Route" {
			compRoutes[r]++
		}
	}
	type groupKey struct {
		part      int
		namespace string
	}
	keyOf := make([]groupKey, len(ex.Paths))
	var keys []groupKey
	seen := map[groupKey]bool{}
	for pi, p := range ex.Paths {
		r := find(nodeIndex[ElementIDs(p.Path)[0]])
		k := groupKey{part: compOrder[r]}
		if compRoutes[r] > maxGroupRoutes {
			k.namespace = pathNamespace(p.Path)
		}
		keyOf[pi] = k
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.namespace, b.namespace))
	})
	groupIndex := make(map[groupKey]int, len(keys))
	for gi, k := range keys {
		groupIndex[k] = gi
	}
	groupPaths := make([][]int, len(keys))
	inGroup := make([]map[int]bool, len(keys))
	for gi := range keys {
		inGroup[gi] = map[int]bool{}
	}
	for pi, p := range ex.Paths {
		gi := groupIndex[keyOf[pi]]
		groupPaths[gi] = append(groupPaths[gi], pi)
		ids := ElementIDs(p.Path)
		for _, id := range ids {
			inGroup[gi][nodeIndex[id]] = true
		}
		for _, a := range parents[nodeIndex[ids[0]]] {
			if above(a) {
				inGroup[gi][a] = true
			}
		}
	}
	members := make([][]int, len(keys))
	for gi := range keys {
		for i := range inGroup[gi] {
			members[gi] = append(members[gi], i)
		}
		slices.Sort(members[gi]) // in the order the paths first reach them
	}

	// The paths through each node (by ID) and along each edge.
	policyIndex := make(map[policyKey]int, len(ex.Policies))
	for i, p := range ex.Policies {
		policyIndex[policyKey{p.Kind, p.Namespace, p.Name}] = i
	}
	nodePaths := make([][]int, len(g.Nodes))
	edgePaths := map[[2]int][]int{}
	pathLeaf := make([]int, len(ex.Paths))
	for pi, p := range ex.Paths {
		ids := ElementIDs(p.Path)
		for i, id := range ids {
			n := nodeIndex[id]
			nodePaths[n] = appendOnce(nodePaths[n], pi)
			if i > 0 {
				k := [2]int{nodeIndex[ids[i-1]], n}
				edgePaths[k] = appendOnce(edgePaths[k], pi)
			}
		}
		first, last := nodeIndex[ids[0]], nodeIndex[ids[len(ids)-1]]
		pathLeaf[pi] = last
		for _, a := range parents[first] {
			if above(a) {
				nodePaths[a] = appendOnce(nodePaths[a], pi)
				k := [2]int{a, first}
				edgePaths[k] = appendOnce(edgePaths[k], pi)
			}
		}
	}

	// Badges, by node: one per policy, with the classes it brings there.
	badges := make([][]Badge, len(g.Nodes))
	for _, a := range g.Attachments {
		n, ok := nodeIndex[a.Node]
		pi, known := policyIndex[policyKey{a.Kind, a.Namespace, a.Name}]
		if !ok || !known {
			continue
		}
		j := slices.IndexFunc(badges[n], func(b Badge) bool { return b.Policy == pi })
		if j < 0 {
			badges[n] = append(badges[n], Badge{Policy: pi})
			j = len(badges[n]) - 1
		}
		if a.Class != "" && !slices.Contains(badges[n][j].Classes, a.Class) {
			badges[n][j].Classes = append(badges[n][j].Classes, a.Class)
		}
	}
	for n := range badges {
		slices.SortStableFunc(badges[n], func(a, b Badge) int { return cmp.Compare(a.Policy, b.Policy) })
	}

	// Columns: the levels that hold a node, each as wide as its widest label or badge.
	widths := make([]int, len(columnLevels))
	for i, n := range g.Nodes {
		c := columnOf(n.Level)
		w := max(minColumnW, textWidth(n.Label, labelAdvance)+2*nodePad+4)
		for _, b := range badges[i] {
			w = max(w, textWidth(badgeText(ex.Policies[b.Policy], b.Classes), badgeAdvance)+4*nodePad)
		}
		widths[c] = max(widths[c], min(w, maxColumnW))
	}
	var l Layout
	colX := make([]int, len(columnLevels))
	x := margin
	for c, w := range widths {
		if w == 0 {
			continue
		}
		colX[c] = x
		l.Columns = append(l.Columns, Column{Title: columnLevels[c].title, X: x, W: w})
		x += w + columnGap
	}
	entryW := minColumnW
	winners := make([][]int, len(ex.Paths))
	for pi, p := range ex.Paths {
		for _, s := range settingsOf(p) {
			ns, name, _ := strings.Cut(s.Source, "/")
			if w, ok := policyIndex[policyKey{p.Kind, ns, name}]; ok && !slices.Contains(winners[pi], w) {
				winners[pi] = append(winners[pi], w)
			}
		}
		entryW = max(entryW, min(maxColumnW, textWidth(entryText(ex, Entry{Path: pi, Winners: winners[pi]}), badgeAdvance)+2*nodePad+4))
	}
	if len(ex.Paths) > 0 {
		l.Columns = append(l.Columns, Column{Title: pathsTitle, X: x, W: entryW})
		x += entryW
	}
	l.Width = x + margin

	for gi, nodes := range members {
		var entries []Entry
		for _, pi := range groupPaths[gi] {
			entries = append(entries, Entry{Path: pi, Winners: winners[pi], Leaf: pathLeaf[pi]})
		}
		grp := layOutGroup(g, nodes, entries, badges, nodePaths, colX, widths, x-entryW, entryW)
		if ns := keys[gi].namespace; ns != "" {
			grp.Title += " · routes in " + ns
		}
		// Edges, by the group's own node positions.
		at := make(map[string]int, len(grp.Nodes))
		for i, n := range grp.Nodes {
			at[n.ID] = i
		}
		for f, from := range grp.Nodes {
			for _, c := range children[nodeIndex[from.ID]] {
				t, ok := at[g.Nodes[c].ID]
				if !ok {
					continue
				}
				a, b := from.Box, grp.Nodes[t].Box
				grp.Edges = append(grp.Edges, PlacedEdge{From: f, To: t,
					X1: a.X + a.W, Y1: a.Y + nodeHead/2, X2: b.X, Y2: b.Y + nodeHead/2,
					Paths: edgePaths[[2]int{nodeIndex[from.ID], c}]})
			}
		}
		l.Groups = append(l.Groups, grp)
	}
	return l
}
