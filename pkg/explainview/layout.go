package explainview

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// Layout is where the picture puts every box: one column per level of the hierarchy
// (fixed, so a layered layout needs no graph library), the hierarchy split into groups
// (the parts no path joins: a Gateway with what hangs off it, or several Gateways that
// share a route or a backend), each group's boxes ordered to keep the edges short and
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

// textWidth is the drawn width of s at advance per character; wide (East Asian) runes
// count twice.
func textWidth(s string, advance float64) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || r >= 0x1F000) {
			n++
		}
	}
	return int(math.Ceil(float64(n) * advance))
}

// fit shortens s with an ellipsis until it is at most w wide at advance.
func fit(s string, w int, advance float64) string {
	if textWidth(s, advance) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…", advance) > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// badgeText is a badge's words: its stanza marks (D defaults, O overrides), kind and name.
func badgeText(p impact.PolicyStatus, classes []string) string {
	mark := ""
	for _, c := range classes {
		switch c {
		case "defaults":
			mark += "D"
		case "overrides":
			mark += "O"
		}
	}
	if mark == "" {
		mark = "·"
	}
	return mark + " " + p.Kind + " " + policyRef(p.Namespace, p.Name)
}

// entryText is a path's words in the last column: its kind and its winners.
func entryText(ex impact.Explanation, e Entry) string {
	kind := ex.Paths[e.Path].Kind
	switch len(e.Winners) {
	case 0:
		return kind + ": no setting"
	case 1:
		p := ex.Policies[e.Winners[0]]
		return kind + " ← " + policyRef(p.Namespace, p.Name)
	}
	p := ex.Policies[e.Winners[0]]
	return kind + " ← " + policyRef(p.Namespace, p.Name) + " +" + strconv.Itoa(len(e.Winners)-1)
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
