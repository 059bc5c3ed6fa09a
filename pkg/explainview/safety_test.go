package explainview_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/pkg/explainview"
)

// TestOnlyWhatExplainShows plants a word in everything explain's JSON leaves out (a Secret,
// labels, annotations, route matches, another tenant's policy off the target's paths) and
// asserts that the JSON, the page and both pictures are free of it.
func TestOnlyWhatExplainShows(t *testing.T) {
	snap, ex, target := explain(t, []string{"testdata/planted/in.yaml"}, "", "HTTPRoute/app/store")
	data, err := json.Marshal(ex)
	require.NoError(t, err)
	require.NotContains(t, strings.ToLower(string(data)), "planted", "the planted word is in explain's JSON: the fixture is wrong")
	require.Contains(t, string(data), "store-color", "the fixture's own policy is missing from explain's JSON")
	for _, format := range explainview.Formats {
		var b bytes.Buffer
		require.NoError(t, explainview.Write(&b, format, snap, ex, target))
		require.Contains(t, b.String(), "store-color", format)
		require.NotContains(t, strings.ToLower(b.String()), "planted", format)
	}
}

// TestPageValuesAreExplainValues: every value the page prints for a setting is the value
// at that setting's place in the path's effective policy as `-o json` prints it, and its
// source the one `-o json` names.
func TestPageValuesAreExplainValues(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, ex, _ := explain(t, tc.in, tc.config, tc.target)
			for _, p := range ex.Paths {
				for _, s := range p.Settings {
					at, ok := settingAt(p.Effective, s.Name)
					require.True(t, ok, "%s: %s is not in the effective policy", strings.Join(p.Path, " > "), s.Name)
					require.Equal(t, compact(t, at), compact(t, s.Value), "%s: %s", strings.Join(p.Path, " > "), s.Name)
					require.Equal(t, p.Sources[s.Name], s.Source)
				}
			}
		})
	}
}

// settingAt finds a setting, named as explain names it ("timeout.http.idle",
// "compression[type=Gzip].type": a keyed list's item by its key fields), in an effective
// policy.
func settingAt(v any, name string) (any, bool) {
	for name != "" {
		// The segment ends at the first dot outside brackets.
		end, depth := len(name), 0
		for i, r := range name {
			if r == '[' {
				depth++
			} else if r == ']' {
				depth--
			} else if r == '.' && depth == 0 {
				end = i
				break
			}
		}
		seg := name[:end]
		name = strings.TrimPrefix(name[end:], ".")
		field, keys, keyed := strings.Cut(strings.TrimSuffix(seg, "]"), "[")
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[field]; !ok {
			return nil, false
		}
		if !keyed {
			continue
		}
		items, _ := v.([]any)
		v = nil
		for _, item := range items {
			if matchesKeys(item, keys) {
				v = item
				break
			}
		}
		if v == nil {
			return nil, false
		}
	}
	return v, true
}

// matchesKeys reports whether a list item has every key field of "k=v,k2=v2".
func matchesKeys(item any, keys string) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, kv := range strings.Split(keys, ",") {
		k, want, _ := strings.Cut(kv, "=")
		if got, ok := m[k].(string); !ok || got != want {
			return false
		}
	}
	return true
}

func compact(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return strings.TrimSpace(b.String())
}

var (
	scriptRE = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	styleRE  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	tagRE    = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	// external is what a browser would fetch: a tag's src, an href but an in-page anchor, a stylesheet
	// link, an embedded frame or object, a CSS url() or @import.
	external = regexp.MustCompile(`(?i)\s(src|srcset|action|poster|data)=|\shref="[^#]|^<(link|iframe|object|embed|img)|url\(|@import`)
)

// TestPageIsSelfContained: one inline style and one inline script, each admitted by the
// page's Content-Security-Policy by its hash, which admits nothing else; nothing fetched.
func TestPageIsSelfContained(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap, ex, target := explain(t, tc.in, tc.config, tc.target)
			var b bytes.Buffer
			require.NoError(t, explainview.Write(&b, "html", snap, ex, target))
			page := b.String()
			scripts, styles := scriptRE.FindAllStringSubmatch(page, -1), styleRE.FindAllStringSubmatch(page, -1)
			require.Len(t, scripts, 1)
			require.Len(t, styles, 1)
			require.Equal(t, 1, strings.Count(page, "<script"), "a script element the template did not write")
			rest := strings.Replace(strings.Replace(page, scripts[0][0], "", 1), styles[0][0], "", 1)
			for _, tag := range tagRE.FindAllString(rest, -1) {
				require.False(t, external.MatchString(tag), "the page loads something: %s", tag)
			}
			require.Empty(t, external.FindAllString(styles[0][1], -1), "the style loads something")
			csp := "default-src &#39;none&#39;; style-src &#39;sha256-" + sum(styles[0][1]) + "&#39;; script-src &#39;sha256-" + sum(scripts[0][1]) +
				"&#39;; base-uri &#39;none&#39;; form-action &#39;none&#39;"
			// html/template writes a hash's "+" as "&#43;"; the browser reads it back.
			csp = strings.ReplaceAll(csp, "+", "&#43;")
			require.Contains(t, page, `<meta http-equiv="Content-Security-Policy" content="`+csp+`">`)
		})
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

// TestGraphShowsOnlyShownPaths: every node of a picture is an element of a path explain
// shows (or the GatewayClass or Namespace above one of its Gateways), and every policy one
// it lists.
func TestGraphShowsOnlyShownPaths(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap, ex, _ := explain(t, tc.in, tc.config, tc.target)
			elements := map[string]bool{}
			for _, p := range ex.Paths {
				for _, id := range explainview.ElementIDs(p.Path) {
					elements[id] = true
				}
			}
			g := explainview.BuildGraph(ex, explainview.Attachments(snap, ex))
			for _, n := range g.Nodes {
				if n.Level == "GatewayClass" || n.Level == "Namespace" {
					continue
				}
				require.True(t, elements[n.ID], "node %q is on no shown path", n.ID)
			}
			require.Equal(t, ex.Policies, g.Policies)
			for _, a := range g.Attachments {
				require.True(t, elements[a.Node] || a.Above != "", "attachment to %q", a.Node)
				require.Contains(t, []string{"defaults", "overrides", ""}, a.Class)
			}
		})
	}
}
