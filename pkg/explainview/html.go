package explainview

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
)

// HTML renders the explanation of a graph as one self-contained page: the hierarchy drawn
// as inline SVG (Layout: each policy a badge on the point it attaches at, each path's
// winners beside it; selecting a policy or a path highlights what it reaches), the policies
// with their statuses, and each path's effective policy, setting by setting with the policy that
// supplied it; search and filters by kind, namespace and policy status, which the page also
// reads from its URL (#kind=ColorPolicy&namespace=app&status=Enforced&q=blue). Every
// text comes from the explanation, so the page shows what `explain -o json` shows; its
// Content-Security-Policy admits only its own inline style and script, by hash, and
// nothing from the network. title heads the page ("Policies" when empty).
func HTML(g Graph, title string) ([]byte, error) {
	ex := g.ex
	if title == "" {
		title = "Policies"
	}
	data := page{
		Title:    title,
		Statuses: statusesOf(ex.Policies),
		CSS:      template.CSS(pageCSS),
		JS:       template.JS(pageJS),
		CSP: "default-src 'none'; style-src " + cspHash(pageCSS) + "; script-src " + cspHash(pageJS) +
			"; base-uri 'none'; form-action 'none'",
	}
	statusOf := make(map[string]string, len(ex.Policies))
	counts := map[string]int{}
	kinds, namespaces := set{}, set{}
	layout := LayOut(g)
	wins := make([][]int, len(ex.Policies))
	badged := make([]bool, len(ex.Policies))
	for gi, grp := range layout.Groups {
		var paths []int
		for _, e := range grp.Entries {
			paths = append(paths, e.Path)
			for _, w := range e.Winners {
				wins[w] = append(wins[w], e.Path)
			}
		}
		for _, n := range grp.Nodes {
			for _, b := range n.Badges {
				badged[b.Policy] = true
			}
		}
		slices.Sort(paths)
		summary := plural(len(grp.Nodes), "object", "objects") + ", " + plural(grp.Routes, "route", "routes") + ", " + plural(len(paths), "path", "paths")
		data.Groups = append(data.Groups, pageGroup{Title: grp.Title, Summary: summary, Paths: ints(paths),
			Open: gi < openGroups, SVG: svgGroup(layout, grp, ex, grp.Title)})
	}
	for i, p := range ex.Policies {
		statusOf[p.Kind+" "+policyRef(p.Namespace, p.Name)] = p.Status
		counts[p.Status]++
		kinds.add(p.Kind)
		namespaces.add(p.Namespace)
		slices.Sort(wins[i])
		wins[i] = slices.Compact(wins[i])
		var loses []int
		for _, pi := range g.reach[policyKey{p.Kind, p.Namespace, p.Name}] {
			if !slices.Contains(wins[i], pi) {
				loses = append(loses, pi)
			}
		}
		pp := pagePolicy{PolicyStatus: p, Class: statusClass(p.Status), Index: i, Wins: ints(wins[i]), Loses: ints(loses)}
		data.Policies = append(data.Policies, pp)
		if !badged[i] {
			data.Unattached = append(data.Unattached, pp)
		}
	}
	for _, s := range data.Statuses {
		data.Counts = append(data.Counts, statusCount{Status: s, Class: statusClass(s), N: counts[s]})
	}
	for i, p := range ex.Paths {
		path, err := pagePathOf(p, statusOf)
		if err != nil {
			return nil, err
		}
		path.Index = i
		kinds.add(p.Kind)
		for _, ns := range strings.Fields(path.Namespaces) {
			namespaces.add(ns)
		}
		data.Paths = append(data.Paths, path)
	}
	data.Kinds, data.Namespaces = kinds.sorted(), namespaces.sorted()
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type page struct {
	Title                       string
	Counts                      []statusCount
	Kinds, Namespaces, Statuses []string
	Policies                    []pagePolicy
	Paths                       []pagePath
	// Groups are the hierarchy's drawings; Unattached the policies on none of them.
	Groups     []pageGroup
	Unattached []pagePolicy
	CSS        template.CSS
	JS         template.JS
	CSP        string
}

type statusCount struct {
	Status, Class string
	N             int
}

type pagePolicy struct {
	impact.PolicyStatus
	Class string
	// Index is the policy's place in the explanation, as the picture's badges name it;
	// Wins and Loses list the paths where it supplies a setting and where it attaches but
	// supplies none (overridden there), space-separated.
	Index       int
	Wins, Loses string
}

// pageGroup is one part of the hierarchy, drawn in a section of its own that folds.
type pageGroup struct {
	Title, Summary string
	// Paths lists the group's paths, space-separated, for the filters.
	Paths string
	Open  bool
	SVG   template.HTML
}

// openGroups is how many groups the page opens at first; the others are folded (a whole
// cluster's hundreds of Gateways would otherwise make one endless page). The filters open
// those they match.
const openGroups = 8

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

type pagePath struct {
	Index    int
	Kind, ID string
	Elements []pageElement
	// Namespaces are those of the path's objects and of the policies behind its settings,
	// space-separated, for the namespace filter.
	Namespaces string
	Settings   []pageSetting
	Effective  string
}

type pageElement struct{ Label, Level string }

type pageSetting struct {
	Name, Value, Source       string
	SourceStatus, SourceClass string
}

func pagePathOf(p impact.PathEffect, statusOf map[string]string) (pagePath, error) {
	effective, err := marshal(p.Effective, "  ")
	if err != nil {
		return pagePath{}, fmt.Errorf("path %s: %w", strings.Join(p.Path, " > "), err)
	}
	out := pagePath{Kind: p.Kind, ID: strings.Join(p.Path, " > "), Effective: effective}
	namespaces := set{}
	for _, e := range p.Path {
		out.Elements = append(out.Elements, pageElement{Label: e, Level: level(e)})
		if ns, ok := namespaceOf(e); ok {
			namespaces.add(ns)
		}
	}
	for _, s := range settingsOf(p) {
		value, err := marshal(s.Value, "")
		if err != nil {
			return pagePath{}, fmt.Errorf("path %s, setting %s: %w", out.ID, s.Name, err)
		}
		status := statusOf[p.Kind+" "+s.Source]
		out.Settings = append(out.Settings, pageSetting{Name: s.Name, Value: value, Source: s.Source, SourceStatus: status, SourceClass: statusClass(status)})
		if ns, _, ok := strings.Cut(s.Source, "/"); ok {
			namespaces.add(ns)
		}
	}
	out.Namespaces = strings.Join(namespaces.sorted(), " ")
	return out, nil
}

// settingsOf returns a path's settings with their values; an explanation read back from
// JSON has only Sources, whose values are then left empty (the effective JSON shows them).
func settingsOf(p impact.PathEffect) []settingShown {
	var out []settingShown
	if len(p.Settings) > 0 {
		for _, s := range p.Settings {
			out = append(out, settingShown{Name: s.Name, Value: s.Value, Source: s.Source})
		}
		return out
	}
	for name, source := range p.Sources {
		out = append(out, settingShown{Name: name, Source: source})
	}
	slices.SortFunc(out, func(a, b settingShown) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type settingShown struct {
	Name, Source string
	Value        any
}

// marshal writes v as JSON without escaping <, > and & (html/template escapes the page),
// so a value reads as the policy wrote it; indent "" is compact.
func marshal(v any, indent string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// namespaceOf reads the namespace of a path element that names an object
// ("HTTPRoute app/store"); sections ("Listener http") have none.
func namespaceOf(element string) (string, bool) {
	_, ref, ok := strings.Cut(element, " ")
	if !ok || isSection(element) {
		return "", false
	}
	ns, _, ok := strings.Cut(ref, "/")
	return ns, ok
}

// statusesOf lists the known statuses, then any others the policies carry, sorted.
func statusesOf(policies []impact.PolicyStatus) []string {
	out := slices.Clone(Statuses)
	extra := set{}
	for _, p := range policies {
		if !slices.Contains(out, p.Status) {
			extra.add(p.Status)
		}
	}
	return append(out, extra.sorted()...)
}

// cspHash is the Content-Security-Policy source that admits exactly this inline text.
func cspHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

type set map[string]bool

func (s set) add(v string) { s[v] = true }

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for v := range s {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
