// Package html renders `webhook explain -o html` of the repository's examples/ in headless
// Chromium (Debian's `chromium` package) and asserts on the DOM its script leaves (every
// policy and path shown; the filters a URL fragment presets hide exactly the rows they
// should) and on a screenshot (a 1280x900 PNG that is not blank, its header drawn by the
// page's own style). Skipped when there is no `chromium` binary (unless REQUIRE_CHROMIUM is
// set): `make html-check` installs it and runs this test. UPDATE_GOLDEN=1 writes the
// screenshot to docs/images/explain-html.png.
package html

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// docsImage is the screenshot the docs show (docs/pictures.md).
const docsImage = "../../docs/images/explain-html.png"

func TestExplainPageInChromium(t *testing.T) {
	browser := chromium(t)
	ex, page := render(t, "../../examples")
	dir := t.TempDir()
	file := filepath.Join(dir, "explain.html")
	require.NoError(t, os.WriteFile(file, page, 0o644))
	url := "file://" + file

	t.Run("every row", func(t *testing.T) {
		dom := dumpDOM(t, browser, dir, url)
		assert.Contains(t, dom, `data-filtered="false"`, "the page's script did not run")
		assertShown(t, dom, policyIDs(ex, nil), pathIDs(ex, nil))
	})
	filters := map[string]struct {
		policy func(impact.PolicyStatus) bool
		path   func(impact.PathEffect) bool
	}{
		"namespace=infra&kind=ColorPolicy": {
			policy: func(p impact.PolicyStatus) bool { return p.Kind == "ColorPolicy" && p.Namespace == "infra" },
			path: func(p impact.PathEffect) bool {
				return p.Kind == "ColorPolicy" && slices.Contains(namespacesOf(p), "infra")
			},
		},
		"kind=BackendTLSPolicy": {
			policy: func(p impact.PolicyStatus) bool { return p.Kind == "BackendTLSPolicy" },
			path:   func(p impact.PathEffect) bool { return p.Kind == "BackendTLSPolicy" },
		},
		"status=Overridden": {
			policy: func(p impact.PolicyStatus) bool { return p.Status == "Overridden" },
			path:   func(impact.PathEffect) bool { return true }, // the status filters policies only
		},
		"q=purple": { // a value: only the path whose effective colour it is
			policy: func(impact.PolicyStatus) bool { return false },
			path: func(p impact.PathEffect) bool {
				return p.Effective["color"] == "purple"
			},
		},
	}
	for fragment, f := range filters {
		t.Run(fragment, func(t *testing.T) {
			dom := dumpDOM(t, browser, dir, url+"#"+fragment)
			assert.Contains(t, dom, `data-filtered="true"`, "the page did not read its URL")
			want := policyIDs(ex, f.policy)
			require.NotEqual(t, len(policyIDs(ex, nil))+len(pathIDs(ex, nil)), len(want)+len(pathIDs(ex, f.path)), "a filter that hides nothing proves nothing")
			assertShown(t, dom, want, pathIDs(ex, f.path))
			assert.Equal(t, len(want) == 0, !hasAttr(emptyRow(t, dom, "policy"), "hidden"), "the no-policy-matches row")
		})
	}

	t.Run("screenshot", func(t *testing.T) {
		data := settledScreenshot(t, browser, dir, url, 1280, 900)
		if os.Getenv("UPDATE_GOLDEN") != "" {
			require.NoError(t, os.MkdirAll(filepath.Dir(docsImage), 0o755))
			require.NoError(t, os.WriteFile(docsImage, data, 0o644))
		}
	})
}

// settledScreenshot takes a w x h screenshot of url, checks it (assertPicture) and
// returns it as PNG. Chromium now and then draws before it has rasterized every tile
// (under load, even with --run-all-compositor-stages-before-draw): the page is settled
// when two screenshots in a row agree but for at most unsettledPixels pixels (a scrolling
// box's edge is now and then drawn a pixel apart under load; a missing tile is thousands).
func settledScreenshot(t *testing.T, browser, dir, url string, w, h int) []byte {
	t.Helper()
	var last image.Image
	var data []byte
	settled := false
	for i := 0; i < 4 && !settled; i++ {
		shot := filepath.Join(dir, "shot-"+strconv.Itoa(i)+".png")
		run(t, browser, dir, "--screenshot="+shot, "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "--hide-scrollbars", url)
		var err error
		data, err = os.ReadFile(shot)
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(data))
		require.NoError(t, err, "the screenshot is not a PNG")
		assertPicture(t, img, w, h)
		if last != nil {
			n, where := diffPixels(last, img)
			settled = n <= unsettledPixels
			if !settled {
				t.Logf("screenshots %d and %d differ in %d pixels within %v", i-1, i, n, where)
			}
		}
		last = img
	}
	require.True(t, settled, "no two screenshots in a row agreed: the page never settled")
	return data
}

// TestDocsScreenshot: the screenshot the docs show is a 1280x900 PNG of the page, under
// 300 KB (UPDATE_GOLDEN=1 with chromium rewrites it). It needs no browser.
func TestDocsScreenshot(t *testing.T) {
	data, err := os.ReadFile(docsImage)
	require.NoError(t, err)
	assert.Less(t, len(data), 300<<10, "docs/images/explain-html.png is over 300 KB")
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assertScreenshot(t, img)
}

// assertScreenshot: a 1280x900 screenshot of the page (assertPicture).
func assertScreenshot(t *testing.T, img image.Image) {
	t.Helper()
	assertPicture(t, img, 1280, 900)
}

// assertPicture: w x h, many colours, no colour covering nearly all of it, and the
// header's dark blue-grey (#263238) at its top left: the page's style applied.
func assertPicture(t *testing.T, img image.Image, w, h int) {
	t.Helper()
	b := img.Bounds()
	require.Equal(t, image.Rect(0, 0, w, h), b, "the screenshot's size")
	counts := map[[3]uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	assert.Greater(t, len(counts), 64, "the screenshot has %d colours: blank or unstyled", len(counts))
	assert.Less(t, float64(most)/float64(b.Dx()*b.Dy()), 0.9, "one colour covers %d of %d pixels", most, b.Dx()*b.Dy())
	r, g, bl, _ := img.At(4, 4).RGBA()
	assert.Equal(t, [3]uint32{0x26, 0x32, 0x38}, [3]uint32{r >> 8, g >> 8, bl >> 8}, "the header's colour at (4,4): the page's style did not apply")
}

// unsettledPixels is how many pixels two screenshots of a settled page may differ in.
const unsettledPixels = 64

// diffPixels counts the pixels where two images of one size differ, and bounds them.
func diffPixels(a, b image.Image) (int, image.Rectangle) {
	n, where := 0, image.Rectangle{}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
				where = where.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return n, where
}

// chromium finds the browser, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path
	}
	path, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium on PATH, and REQUIRE_CHROMIUM is set (make html-check, make pictures): apt-get install -y chromium")
	}
	if err != nil {
		t.Skip("no chromium on PATH, so the page is not opened in a browser: `make html-check` (and `make pictures`, which writes the docs' screenshots) installs Debian's chromium package (apt-get install -y chromium) and runs this test; CHROMIUM=/path/to/binary picks another")
	}
	return path
}

// render explains the manifests as `webhook explain -f dir -o html` does.
func render(t *testing.T, dir string) (impact.Explanation, []byte) {
	t.Helper()
	docs, err := manifests.Read([]string{dir}, nil, manifests.Options{Recursive: true})
	require.NoError(t, err)
	table := kinds.BuiltinKindTable()
	snap, err := check.State(docs, table)
	require.NoError(t, err)
	ex := impact.Explain(snap, table, nil)
	require.NotEmpty(t, ex.Policies)
	require.NotEmpty(t, ex.Paths)
	var b bytes.Buffer
	require.NoError(t, explainview.Write(&b, "html", snap, ex, nil))
	return ex, b.Bytes()
}

// run runs headless Chromium with a profile of its own in dir, and returns its stdout.
func run(t *testing.T, browser, dir string, args ...string) string {
	t.Helper()
	// Generous: a machine shared by several builds starts Chromium slowly.
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--virtual-time-budget=5000",
		// Without it a screenshot now and then misses a tile (3 in 10 here): the page is drawn
		// before every part of it is rasterized.
		"--run-all-compositor-stages-before-draw"}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.String()
}

func dumpDOM(t *testing.T, browser, dir, url string) string {
	t.Helper()
	dom := run(t, browser, dir, "--dump-dom", url)
	require.Contains(t, dom, `id="filters"`, "chromium printed no page")
	return dom
}

var rowRE = regexp.MustCompile(`<(?:tr|article)\b[^>]*\bdata-row="(policy|path)"[^>]*>`)

// assertShown: the rows the DOM shows (no hidden attribute) are exactly these, in order,
// and the counter says so.
func assertShown(t *testing.T, dom string, policies, paths []string) {
	t.Helper()
	shown := map[string][]string{"policy": {}, "path": {}}
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		if !hasAttr(m[0], "hidden") {
			shown[m[1]] = append(shown[m[1]], unescape(attr(m[0], "data-id")))
		}
	}
	assert.Equal(t, policies, shown["policy"], "policies shown")
	assert.Equal(t, paths, shown["path"], "paths shown")
	counter := regexp.MustCompile(`<output id="shown"[^>]*>`).FindString(dom)
	assert.Equal(t, itoa(len(policies)), attr(counter, "data-policies"))
	assert.Equal(t, itoa(len(paths)), attr(counter, "data-paths"))
}

func emptyRow(t *testing.T, dom, row string) string {
	t.Helper()
	tag := regexp.MustCompile(`<[a-z]+\b[^>]*\bdata-empty="` + row + `"[^>]*>`).FindString(dom)
	require.NotEmpty(t, tag, "no empty-%s row", row)
	return tag
}

func hasAttr(tag, name string) bool {
	return regexp.MustCompile(`\s` + name + `(=|\s|>)`).MatchString(tag)
}

func attr(tag, name string) string {
	m := regexp.MustCompile(`\s` + name + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

func unescape(s string) string {
	return strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'", "&amp;", "&").Replace(s)
}

func itoa(n int) string { return strconv.Itoa(n) }

// policyIDs and pathIDs name the rows as the page does, in the explanation's order; keep
// picks some (nil: all).
func policyIDs(ex impact.Explanation, keep func(impact.PolicyStatus) bool) []string {
	out := []string{}
	for _, p := range ex.Policies {
		if keep == nil || keep(p) {
			out = append(out, p.Kind+" "+p.Namespace+"/"+p.Name)
		}
	}
	return out
}

func pathIDs(ex impact.Explanation, keep func(impact.PathEffect) bool) []string {
	out := []string{}
	for _, p := range ex.Paths {
		if keep == nil || keep(p) {
			out = append(out, p.Kind+": "+strings.Join(p.Path, " > "))
		}
	}
	return out
}

// namespacesOf are the namespaces a path touches: its objects' and its settings' sources'.
func namespacesOf(p impact.PathEffect) []string {
	var out []string
	for _, e := range p.Path {
		if _, ref, ok := strings.Cut(e, " "); ok && strings.Contains(ref, "/") {
			ns, _, _ := strings.Cut(ref, "/")
			out = append(out, ns)
		}
	}
	for _, source := range p.Sources {
		ns, _, _ := strings.Cut(source, "/")
		out = append(out, ns)
	}
	return out
}
