package explainview_test

import (
	"bytes"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// pictures are the pages the geometry and link tests draw: every golden case, and
// generated clusters of 60 routes (the docs' screenshot) and of 800 (a selector policy on
// the 200 routes of one namespace).
func pictures(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, tc := range cases {
		snap, ex, target := explain(t, tc.in, tc.config, tc.target)
		var b bytes.Buffer
		require.NoError(t, explainview.Write(&b, "html", snap, ex, target))
		out[name] = b.String()
	}
	for _, routes := range []int{60, 800} {
		file := filepath.Join(t.TempDir(), "cluster.json")
		require.NoError(t, synthetic.WritePicture(file, routes))
		snap, ex, _ := explain(t, []string{file}, "", "")
		var b bytes.Buffer
		require.NoError(t, explainview.Write(&b, "html", snap, ex, nil))
		out[fmt.Sprintf("generated-%d-routes", routes)] = b.String()
	}
	return out
}

var (
	svgRE  = regexp.MustCompile(`(?s)<svg class="hierarchy" width="(\d+)" height="(\d+)"[^>]*>(.*?)</svg>`)
	rectRE = regexp.MustCompile(`<rect (?:class="box" )?data-box="(node|badge|entry)" x="(-?\d+)" y="(-?\d+)" width="(\d+)" height="(\d+)"[^>]*/>(?:<text class="label" [^>]*>|<text [^>]*>)([^<]*)</text>`)
)

type drawn struct {
	kind  string
	box   explainview.Box
	text  string
	owner int // for a badge, the index of its node among the drawing's boxes
}

// TestPictureBoxesApart reads every box the page's SVG draws and checks: no two nodes or
// path entries overlap (edges included); each badge lies inside the node it belongs to and
// apart from the other badges there; every box is inside its drawing; every text fits its
// box at the monospace advance the layout assumes. A layout that stacked two boxes, or
// let a label run out of its box, fails here.
func TestPictureBoxesApart(t *testing.T) {
	for name, page := range pictures(t) {
		t.Run(name, func(t *testing.T) {
			svgs := svgRE.FindAllStringSubmatch(page, -1)
			require.NotEmpty(t, svgs, "no drawing on the page")
			total := 0
			for gi, svg := range svgs {
				w, _ := strconv.Atoi(svg[1])
				h, _ := strconv.Atoi(svg[2])
				frame := explainview.Box{W: w, H: h}
				var boxes []drawn
				lastNode := -1
				for _, m := range rectRE.FindAllStringSubmatch(svg[3], -1) {
					d := drawn{kind: m[1], box: explainview.Box{X: atoi(m[2]), Y: atoi(m[3]), W: atoi(m[4]), H: atoi(m[5])}, text: html.UnescapeString(m[6]), owner: -1}
					switch d.kind {
					case "node":
						lastNode = len(boxes)
					case "badge":
						require.GreaterOrEqual(t, lastNode, 0, "a badge before any node")
						d.owner = lastNode
					}
					boxes = append(boxes, d)
				}
				require.Equal(t, strings.Count(svg[3], "data-box="), len(boxes), "group %d: a box the test could not read", gi)
				total += len(boxes)
				for _, a := range boxes {
					assert.True(t, frame.Contains(a.box), "group %d: %s %q at %+v is outside the drawing %dx%d", gi, a.kind, a.text, a.box, w, h)
					size := map[string]float64{"node": 12, "badge": 10, "entry": 10}[a.kind]
					assert.LessOrEqual(t, textWidth(a.text, size), a.box.W-8, "group %d: %s %q does not fit its box of %d", gi, a.kind, a.text, a.box.W)
					if a.kind == "badge" {
						assert.True(t, boxes[a.owner].box.Contains(a.box), "group %d: badge %q at %+v is not inside its node %q at %+v", gi, a.text, a.box, boxes[a.owner].text, boxes[a.owner].box)
					}
				}
				// Boxes sorted by top, then each checked against those that start above
				// its bottom: a sweep, so a thousand boxes are not a million pairs.
				order := make([]int, len(boxes))
				for i := range order {
					order[i] = i
				}
				slices.SortFunc(order, func(a, b int) int { return boxes[a].box.Y - boxes[b].box.Y })
				for i, a := range order {
					for _, b := range order[i+1:] {
						if boxes[b].box.Y > boxes[a].box.Y+boxes[a].box.H {
							break
						}
						x, y := boxes[a], boxes[b]
						if x.kind == "badge" && y.kind == "node" && x.owner == b || y.kind == "badge" && x.kind == "node" && y.owner == a {
							continue // a badge inside its own node
						}
						assert.False(t, x.box.Intersects(y.box), "group %d: %s %q at %+v overlaps %s %q at %+v", gi, x.kind, x.text, x.box, y.kind, y.text, y.box)
					}
				}
			}
			t.Logf("%d boxes in %d drawings", total, len(svgs))
		})
	}
}

// textWidth is a text's width in DejaVu Sans Mono (0.602 em a character), a wide (East
// Asian) character twice.
func textWidth(s string, size float64) int {
	n := 0.0
	for _, r := range s {
		n++
		if r >= 0x1100 && (r >= 0x1F000 || r >= 0x2E80 && r <= 0xD7AF || r >= 0xF900 && r <= 0xFAFF) {
			n++
		}
	}
	return int(n * 0.602 * size)
}

var attrRE = regexp.MustCompile(`(?i)\s(src|href|xlink:href|srcset|action|formaction|poster|data|background|ping)\s*=\s*"([^"]*)"`)

// TestPageLinksStayInPage: the page's only links are anchors to its own elements (a
// path's entry in the picture to that path's table); no src at all, and no attribute
// value holds an http(s) or protocol-relative URL. Opening it fetches nothing.
func TestPageLinksStayInPage(t *testing.T) {
	urlRE := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9]`)
	valueRE := regexp.MustCompile(`="([^"]*)"`)
	for name, page := range pictures(t) {
		t.Run(name, func(t *testing.T) {
			anchors := 0
			for _, m := range attrRE.FindAllStringSubmatch(page, -1) {
				attr, value := strings.ToLower(m[1]), html.UnescapeString(m[2])
				require.Equal(t, "href", attr, "the page has a %s attribute: %s", attr, m[0])
				require.True(t, strings.HasPrefix(value, "#"), "a link out of the page: %s", m[0])
				require.Contains(t, page, ` id="`+value[1:]+`"`, "an anchor to nothing: %s", m[0])
				anchors++
			}
			for _, tag := range tagRE.FindAllString(page, -1) {
				for _, v := range valueRE.FindAllStringSubmatch(tag, -1) {
					assert.False(t, urlRE.MatchString(html.UnescapeString(v[1])), "a URL in an attribute: %s", tag)
				}
			}
			assert.Positive(t, anchors, "no path entry links to its table: the test reads nothing")
		})
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
