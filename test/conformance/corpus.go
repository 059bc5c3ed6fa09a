package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"
)

// Corpus is what the conformance tests of one version say about route attachment.
type Corpus struct {
	Module  string  `json:"module"`
	Version string  `json:"version"`
	Summary Summary `json:"summary"`
	Tests   []Test  `json:"tests"`
}

// Summary counts what Extract read.
type Summary struct {
	// Tests is how many conformance tests were read (the tests package; the mesh tests,
	// about Service parents, are another package and not read).
	Tests int `json:"tests"`
	// Facts is how many attachment facts were read; Unread, how many attachment
	// assertions could not be read mechanically.
	Facts  int `json:"facts"`
	Unread int `json:"unread"`
	// NotAboutAttachment counts the assertions of a condition other than Accepted
	// (ResolvedRefs, listener conditions, Programmed...), which route attachment does not
	// decide.
	NotAboutAttachment int `json:"notAboutAttachment"`
	// OtherHelperCalls counts, by name, the calls of conformance helpers that assert nothing
	// about attachment (Gateway conditions, addresses, readiness): a helper new in a later
	// version shows here first.
	OtherHelperCalls map[string]int `json:"otherHelperCalls"`
	// WithoutFacts are the tests with no attachment assertion (traffic, filters, TLS
	// settings, policies).
	WithoutFacts []string `json:"withoutFacts"`
}

// Test is one conformance test and its attachment facts.
type Test struct {
	Name string `json:"name"`
	// Source is the test's Go file, relative to the conformance module's root.
	Source string `json:"source"`
	// Manifests are the files the suite applies for it, base manifests first.
	Manifests    []string          `json:"manifests"`
	Routes       []RouteFact       `json:"routes,omitempty"`
	Listeners    []ListenerFact    `json:"listeners,omitempty"`
	ListenerSets []ListenerSetFact `json:"listenerSets,omitempty"`
	Gateways     []GatewayFact     `json:"gateways,omitempty"`
	Unread       []Unread          `json:"unread,omitempty"`
}

// Ref names an object; for a parent, optionally one section or port.
type Ref struct {
	// Kind is empty where the assertion matches a parent by name alone.
	Kind        string `json:"kind,omitempty"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
	Port        int64  `json:"port,omitempty"`
}

func (r Ref) String() string {
	s := r.Namespace + "/" + r.Name
	if r.Kind != "" {
		s = r.Kind + " " + s
	}
	if r.SectionName != "" {
		s += " section " + r.SectionName
	}
	if r.Port != 0 {
		s += fmt.Sprintf(" port %d", r.Port)
	}
	return s
}

// RouteFact is a route's Accepted condition for one parent.
type RouteFact struct {
	// At is the assertion's file and line in the conformance module.
	At    string `json:"at"`
	Route Ref    `json:"route"`
	// Parent is the parent the status is for; nil: every parent the route names (the
	// route is accepted by none).
	Parent   *Ref   `json:"parent,omitempty"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"` // empty: any reason
}

// ListenerFact is a listener's AttachedRoutes count.
type ListenerFact struct {
	At     string `json:"at"`
	Parent Ref    `json:"parent"` // a Gateway or a ListenerSet
	// Listener is empty where every listener has the count (GatewayMustHaveZeroRoutes).
	Listener       string `json:"listener,omitempty"`
	AttachedRoutes int64  `json:"attachedRoutes"`
}

// ListenerSetFact is a ListenerSet's Accepted condition.
type ListenerSetFact struct {
	At          string `json:"at"`
	ListenerSet Ref    `json:"listenerSet"`
	Accepted    bool   `json:"accepted"`
	Reason      string `json:"reason,omitempty"`
}

// GatewayFact is a Gateway's AttachedListenerSets count.
type GatewayFact struct {
	At                   string `json:"at"`
	Gateway              Ref    `json:"gateway"`
	AttachedListenerSets int64  `json:"attachedListenerSets"`
}

// Unread is an attachment assertion that could not be read mechanically, and why.
type Unread struct {
	At   string `json:"at"`
	Call string `json:"call"`
	Why  string `json:"why"`
}

// Header opens the corpus file.
const Header = "# Route attachment facts read from Gateway API's conformance tests by `make conformance-corpus`\n" +
	"# (hack/facts/conformance-corpus, test/conformance). Generated: do not edit. The manifests are read from the\n" +
	"# module when test/conformance's test runs; none is copied here.\n"

// Marshal renders the corpus file: YAML with one fact per line (a JSON flow mapping, in
// the fields' order), so that a version bump's diff shows each changed fact on a line.
func (c *Corpus) Marshal() ([]byte, error) {
	var b bytes.Buffer
	var err error
	js := func(v any) string {
		data, e := json.Marshal(v)
		if e != nil && err == nil {
			err = e
		}
		return string(data)
	}
	b.WriteString(Header)
	fmt.Fprintf(&b, "module: %s\nversion: %s\n", js(c.Module), js(c.Version))
	s := c.Summary
	fmt.Fprintf(&b, "summary:\n  tests: %d\n  facts: %d\n  unread: %d\n  notAboutAttachment: %d\n  otherHelperCalls:\n",
		s.Tests, s.Facts, s.Unread, s.NotAboutAttachment)
	names := make([]string, 0, len(s.OtherHelperCalls))
	for n := range s.OtherHelperCalls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "    %s: %d\n", n, s.OtherHelperCalls[n])
	}
	b.WriteString("  withoutFacts:\n")
	for _, n := range s.WithoutFacts {
		fmt.Fprintf(&b, "  - %s\n", js(n))
	}
	b.WriteString("tests:\n")
	for _, t := range c.Tests {
		fmt.Fprintf(&b, "- name: %s\n  source: %s\n  manifests: %s\n", js(t.Name), js(t.Source), js(t.Manifests))
		lines := func(key string, n int, item func(i int) any) {
			if n == 0 {
				return
			}
			fmt.Fprintf(&b, "  %s:\n", key)
			for i := range n {
				fmt.Fprintf(&b, "  - %s\n", js(item(i)))
			}
		}
		lines("routes", len(t.Routes), func(i int) any { return t.Routes[i] })
		lines("listeners", len(t.Listeners), func(i int) any { return t.Listeners[i] })
		lines("listenerSets", len(t.ListenerSets), func(i int) any { return t.ListenerSets[i] })
		lines("gateways", len(t.Gateways), func(i int) any { return t.Gateways[i] })
		lines("unread", len(t.Unread), func(i int) any { return t.Unread[i] })
	}
	return b.Bytes(), err
}

// Unmarshal reads a corpus file.
func Unmarshal(data []byte) (*Corpus, error) {
	var c Corpus
	if err := yaml.UnmarshalStrict(bytes.TrimPrefix(data, []byte(Header)), &c); err != nil {
		return nil, err
	}
	return &c, nil
}
