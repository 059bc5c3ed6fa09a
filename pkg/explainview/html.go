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

// HTML renders the explanation as one self-contained page: the policies with their
// statuses, and each path's effective policy, setting by setting with the policy that
// supplied it; search and filters by kind, namespace and policy status, which the page also
// reads from its URL (#kind=ColorPolicy&namespace=app&status=Enforced&q=blue). Every
// text comes from the explanation, so the page shows what `explain -o json` shows; its
// Content-Security-Policy admits only its own inline style and script, by hash, and
// nothing from the network. title heads the page ("Policies" when empty).
func HTML(ex impact.Explanation, title string) ([]byte, error) {
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
	for _, p := range ex.Policies {
		statusOf[p.Kind+" "+policyRef(p.Namespace, p.Name)] = p.Status
		counts[p.Status]++
		kinds.add(p.Kind)
		namespaces.add(p.Namespace)
		data.Policies = append(data.Policies, pagePolicy{PolicyStatus: p, Class: statusClass(p.Status)})
	}
	for _, s := range data.Statuses {
		data.Counts = append(data.Counts, statusCount{Status: s, Class: statusClass(s), N: counts[s]})
	}
	for _, p := range ex.Paths {
		path, err := pagePathOf(p, statusOf)
		if err != nil {
			return nil, err
		}
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
	CSS                         template.CSS
	JS                          template.JS
	CSP                         string
}

type statusCount struct {
	Status, Class string
	N             int
}

type pagePolicy struct {
	impact.PolicyStatus
	Class string
}

type pagePath struct {
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
