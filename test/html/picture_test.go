package html

import (
	"bufio"
	"bytes"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/explainview"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// generatedRoutes is the size of the generated cluster the docs show: more than 40 routes,
// so its drawing is cut into one section per namespace.
const generatedRoutes = 60

// shot is a screenshot the docs' Pictures page shows (docs/pictures.md), written by
// `make pictures` (UPDATE_GOLDEN=1 with chromium).
type shot struct {
	file, input, fragment string
	w, h                  int
}

// shots are the docs' screenshots: the examples as they open and with a policy selected,
// and the generated cluster as it opens and narrowed to one namespace with its selector
// policy selected. A fragment names a policy by kind and namespace/name; the test turns it
// into the page's index.
var shots = []shot{
	{file: "pictures-examples.png", input: "examples", w: 1680, h: 760},
	{file: "pictures-examples-selected.png", input: "examples", fragment: "policy=ColorPolicy infra/gw-defaults", w: 1680, h: 760},
	{file: "pictures-generated.png", input: "generated", w: 1680, h: 1000},
	{file: "pictures-generated-selector.png", input: "generated", fragment: "namespace=shop&policy=BackendTrafficPolicy shop/shop-web", w: 1680, h: 1000},
}

// picturePage is explain -o html of one input: the examples, or the generated cluster.
type picturePage struct {
	ex       impact.Explanation
	attached []explainview.Attachment
	page     []byte
	url      string
}

func pictureInput(t *testing.T, name, dir string) picturePage {
	t.Helper()
	in := "../../examples"
	if name == "generated" {
		in = filepath.Join(dir, "generated.json")
		require.NoError(t, synthetic.WritePicture(in, generatedRoutes))
	}
	docs, err := manifests.Read([]string{in}, nil, manifests.Options{Recursive: true})
	require.NoError(t, err)
	table := kinds.BuiltinKindTable()
	snap, err := check.State(docs, table)
	require.NoError(t, err)
	ex := impact.Explain(snap, table, nil)
	var b bytes.Buffer
	require.NoError(t, explainview.Write(&b, "html", snap, ex, nil))
	file := filepath.Join(dir, name+".html")
	require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
	return picturePage{ex: ex, attached: explainview.Attachments(snap, ex), page: b.Bytes(), url: "file://" + file}
}

// fragment turns "policy=Kind ns/name" into the page's "policy=<index>".
func (p picturePage) fragment(t *testing.T, f string) string {
	t.Helper()
	params := strings.Split(f, "&")
	for i, kv := range params {
		if ref, ok := strings.CutPrefix(kv, "policy="); ok {
			i2 := p.policyIndex(t, ref)
			params[i] = "policy=" + strconv.Itoa(i2)
		}
	}
	return strings.Join(params, "&")
}

func (p picturePage) policyIndex(t *testing.T, ref string) int {
	t.Helper()
	i := slices.IndexFunc(p.ex.Policies, func(s impact.PolicyStatus) bool { return s.Kind+" "+s.Namespace+"/"+s.Name == ref })
	require.GreaterOrEqual(t, i, 0, "no policy %s", ref)
	return i
}

// reach is, independently of the page, the paths a policy attaches on (an attachment
// point of the policy is one of the path's elements, or above its Gateway) and those it
// wins on (it supplies one of the path's settings).
func (p picturePage) reach(ref string) (wins, loses map[string]bool) {
	wins, loses = map[string]bool{}, map[string]bool{}
	kind, name, _ := strings.Cut(ref, " ")
	for i, path := range p.ex.Paths {
		if path.Kind != kind {
			continue
		}
		ids := explainview.ElementIDs(path.Path)
		attached := false
		for _, a := range p.attached {
			if a.Kind == kind && a.Namespace+"/"+a.Name == name && (slices.Contains(ids, a.Node) || a.Above == ids[0]) {
				attached = true
			}
		}
		won := false
		for _, source := range path.Sources {
			won = won || source == name
		}
		switch {
		case won:
			wins[strconv.Itoa(i)] = true
		case attached:
			loses[strconv.Itoa(i)] = true
		}
	}
	return wins, loses
}

// marked are the picture's elements that lie on paths (nodes, edges, entries), with the
// classes the page's script left on them, as Chromium's DOM holds them.
var markedRE = regexp.MustCompile(`<(?:g|path|a) class="([^"]*)"[^>]*?\sdata-paths="([^"]*)"`)

func marked(dom string) [][2]string {
	var out [][2]string
	for _, m := range markedRE.FindAllStringSubmatch(dom, -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

func hasClass(classes, c string) bool { return slices.Contains(strings.Fields(classes), c) }

func onAny(paths string, set map[string]bool) bool {
	for _, p := range strings.Fields(paths) {
		if set[p] {
			return true
		}
	}
	return false
}

// TestPictureInChromium opens the page of the examples and of a generated cluster of 60
// routes in headless Chromium and reads the DOM the page's script leaves: a policy
// selected by the URL marks exactly the picture's elements on the paths it wins ("win")
// and on those it attaches on but is overridden ("lose"); a path selected marks exactly
// its own and copies its effective settings into the panel; the namespace filter hides
// every section of the drawing but that namespace's.
func TestPictureInChromium(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	for _, input := range []string{"examples", "generated"} {
		p := pictureInput(t, input, dir)
		policies := map[string]string{"examples": "ColorPolicy infra/gw-defaults", "generated": "ColorPolicy infra/gateway-wide"}
		t.Run(input+"/policy", func(t *testing.T) {
			ref := policies[input]
			dom := dumpPicture(t, browser, dir, p.url+"#"+p.fragment(t, "policy="+ref))
			wins, loses := p.reach(ref)
			require.NotEmpty(t, loses, "%s is overridden nowhere: the case proves nothing", ref)
			if input == "generated" {
				require.NotEmpty(t, wins, "%s wins nowhere: the case proves nothing", ref)
			}
			assert.Contains(t, dom, `data-selected="policy `+strconv.Itoa(p.policyIndex(t, ref))+`"`)
			els := marked(dom)
			require.NotEmpty(t, els)
			for _, e := range els {
				assert.Equal(t, onAny(e[1], wins), hasClass(e[0], "win"), "an element on paths %q: class %q", e[1], e[0])
				assert.Equal(t, onAny(e[1], loses), hasClass(e[0], "lose"), "an element on paths %q: class %q", e[1], e[0])
			}
		})
		t.Run(input+"/path", func(t *testing.T) {
			i := len(p.ex.Paths) - 1
			dom := dumpPicture(t, browser, dir, p.url+"#path="+strconv.Itoa(i))
			on := map[string]bool{strconv.Itoa(i): true}
			for _, e := range marked(dom) {
				assert.Equal(t, onAny(e[1], on), hasClass(e[0], "on"), "an element on paths %q: class %q", e[1], e[0])
			}
			panel := regexp.MustCompile(`(?s)<div id="selected">(.*?)</div>`).FindStringSubmatch(dom)
			require.NotNil(t, panel, "no selection panel")
			for _, s := range p.ex.Paths[i].Settings {
				assert.Contains(t, panel[1], `<td class="setting">`+s.Name+`</td>`, "the panel lacks the path's setting")
			}
		})
	}
	t.Run("generated/namespace", func(t *testing.T) {
		p := pictureInput(t, "generated", dir)
		dom := dumpPicture(t, browser, dir, p.url+"#namespace=shop")
		groups := regexp.MustCompile(`(?s)<details class="group"([^>]*)>\s*<summary><span class="ref">([^<]*)</span>`).FindAllStringSubmatch(dom, -1)
		require.Len(t, groups, len(synthetic.PictureNamespaces), "one section per namespace")
		for _, g := range groups {
			assert.Equal(t, !strings.HasSuffix(g[2], "routes in shop"), hasAttr(g[1], "hidden"), "section %q", g[2])
		}
	})
}

func dumpPicture(t *testing.T, browser, dir, url string) string {
	t.Helper()
	dom := run(t, browser, dir, "--dump-dom", url)
	require.Contains(t, dom, `id="picture"`, "chromium printed no page")
	return dom
}

// TestPageFetchesNothing opens the pages in Chromium with every request sent through a
// proxy this test listens as: the page asks for nothing. Chromium's own traffic (its
// update, time and account services) is told apart by host; a page with an image and a
// script from elsewhere, opened the same way, shows that the proxy sees what a page asks.
func TestPageFetchesNothing(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	control := filepath.Join(dir, "control.html")
	require.NoError(t, os.WriteFile(control, []byte(`<!DOCTYPE html><img src="http://picture.invalid/x.png"><script src="https://picture.invalid/x.js"></script>`), 0o644))
	cases := map[string]struct {
		url  string
		want []string
	}{
		"control": {url: "file://" + control, want: []string{"picture.invalid"}},
	}
	for _, input := range []string{"examples", "generated"} {
		p := pictureInput(t, input, dir)
		cases[input] = struct {
			url  string
			want []string
		}{url: p.url, want: nil}
		cases[input+" with a selection"] = struct {
			url  string
			want []string
		}{url: p.url + "#path=0", want: nil}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hosts := proxied(t, func(proxy string) {
				run(t, browser, dir, "--proxy-server=http://"+proxy, "--proxy-bypass-list=<-loopback>", "--dump-dom", tc.url)
			})
			var asked []string
			for _, h := range hosts {
				if !chromiumOwn(h) && !slices.Contains(asked, h) {
					asked = append(asked, h)
				}
			}
			assert.Equal(t, tc.want, asked, "hosts the page asked for")
		})
	}
}

// chromiumOwn: the services Chromium calls by itself (component updates, network time,
// accounts), whatever page it opens.
func chromiumOwn(host string) bool {
	for _, suffix := range []string{".google.com", ".googleapis.com", ".gstatic.com", ".gvt1.com", ".gvt2.com", ".googleusercontent.com"} {
		if strings.HasSuffix("."+host, suffix) {
			return true
		}
	}
	return false
}

// proxied listens on a loopback port, runs open with its address, and returns the host of
// every request Chromium sent to it (CONNECT host:port or GET http://host/...). It
// answers none: a request is recorded, not served.
func proxied(t *testing.T, open func(proxy string)) []string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		hosts []string
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if h := requestHost(line); h != "" {
				mu.Lock()
				hosts = append(hosts, h)
				mu.Unlock()
			}
		}
	}()
	open(l.Addr().String())
	l.Close()
	wg.Wait()
	return hosts
}

// requestHost reads the host of a proxy request line.
func requestHost(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 {
		return ""
	}
	target := f[1]
	if rest, ok := strings.CutPrefix(target, "http://"); ok {
		target, _, _ = strings.Cut(rest, "/")
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return target
	}
	return host
}

// TestPictureScreenshots takes the docs' screenshots (shots) in headless Chromium, each
// once the page has settled; UPDATE_GOLDEN=1 (make pictures) writes them to docs/images.
func TestPictureScreenshots(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	pages := map[string]picturePage{}
	for _, s := range shots {
		t.Run(s.file, func(t *testing.T) {
			p, ok := pages[s.input]
			if !ok {
				p = pictureInput(t, s.input, dir)
				pages[s.input] = p
			}
			url := p.url
			if s.fragment != "" {
				url += "#" + p.fragment(t, s.fragment)
			}
			data := settledScreenshot(t, browser, dir, url, s.w, s.h)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				require.NoError(t, os.WriteFile(filepath.Join(docsImages, s.file), data, 0o644))
			}
		})
	}
}

// docsImages is where the docs keep their screenshots.
const docsImages = "../../docs/images"

// TestDocsPictures: every screenshot the Pictures page lists is in docs/images, a PNG of
// its size under 400 KB with the page's colours, and the page shows it (it needs no
// browser; `make pictures` rewrites them).
func TestDocsPictures(t *testing.T) {
	doc, err := os.ReadFile("../../docs/pictures.md")
	require.NoError(t, err)
	for _, s := range shots {
		t.Run(s.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(docsImages, s.file))
			require.NoError(t, err, "run make pictures")
			assert.Less(t, len(data), 400<<10, "%s is over 400 KB", s.file)
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			assertPicture(t, img, s.w, s.h)
			assert.Contains(t, string(doc), "](images/"+s.file+")", "docs/pictures.md does not show %s", s.file)
		})
	}
}
