package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/index"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// Outcome is how the webhook's attachment compares with one fact.
type Outcome struct {
	Test string
	At   string
	// Fact is what conformance says, and Got what the webhook computes, in words.
	Fact, Got string
	// Judged is false for a fact attachment does not decide: a route or ListenerSet not
	// Accepted for another reason (a listener conflict, an invalid certificate reference).
	Judged bool
	Agrees bool
}

// Key names an outcome in a list of known differences: the test and the assertion's place.
func (o Outcome) Key() string { return o.Test + " " + o.At }

// attachmentReasons are the reasons of a route's Accepted=False that attachment decides:
// no listener admits the route (NotAllowedByListeners), none has an intersecting hostname
// (NoMatchingListenerHostname), the parentRef selects no listener (NoMatchingParent), or
// any reason ("": the route is accepted nowhere).
var attachmentReasons = []string{"", "NotAllowedByListeners", "NoMatchingListenerHostname", "NoMatchingParent"}

// listenerSetReasons are the reasons of a ListenerSet's Accepted=False that attachment
// decides: its Gateway's allowedListeners do not admit it.
var listenerSetReasons = []string{"NotAllowed"}

// gatewayClass stands for the class the suite is run with ({GATEWAY_CLASS_NAME}).
const gatewayClass = "conformance"

// Judge compares every fact of c with the attachment the webhook computes on the test's
// manifests, read from the conformance module at root.
func Judge(c *Corpus, root string) ([]Outcome, error) {
	var out []Outcome
	for _, t := range c.Tests {
		snap, err := Snapshot(root, t.Manifests)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		j := judge{test: t.Name, snap: snap}
		for _, f := range t.Routes {
			out = append(out, j.route(f))
		}
		for _, f := range t.Listeners {
			out = append(out, j.listener(f))
		}
		for _, f := range t.ListenerSets {
			out = append(out, j.listenerSet(f))
		}
		for _, f := range t.Gateways {
			out = append(out, j.gateway(f, t.ListenerSets))
		}
	}
	return out, nil
}

// Snapshot is the state of the cluster while a test runs: the manifests the suite applies
// for it, as `webhook check` reads manifests.
func Snapshot(root string, files []string) (*index.Snapshot, error) {
	var docs []manifests.Document
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		// The suite's Applier sets these to the class and controller under test.
		text := strings.NewReplacer("{GATEWAY_CLASS_NAME}", gatewayClass, "{GATEWAY_CONTROLLER_NAME}", "example.com/"+gatewayClass).Replace(string(data))
		d, err := manifests.Decode(name, []byte(text))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
	}
	return check.State(docs, kinds.BuiltinKindTable())
}

type judge struct {
	test string
	snap *index.Snapshot
}

func (j judge) object(kind string, r Ref) (*topology.Object, bool) {
	return j.snap.Object(policy.TargetKey{Group: kinds.GatewayGroup, Kind: kind, Namespace: r.Namespace, Name: r.Name})
}

func (j judge) route(f RouteFact) Outcome {
	o := Outcome{Test: j.test, At: f.At, Judged: f.Accepted || slices.Contains(attachmentReasons, f.Reason)}
	parent := "every parent it names"
	if f.Parent != nil {
		parent = f.Parent.String()
	}
	o.Fact = fmt.Sprintf("%s %s is %s by %s", f.Route.Kind, f.Route.Namespace+"/"+f.Route.Name, acceptance(f.Accepted, f.Reason), parent)
	route, ok := j.object(f.Route.Kind, f.Route)
	if !ok {
		o.Got = "the route is not in the test's manifests"
		return o
	}
	var matched []topology.ParentAttachment
	var listeners []string
	for _, a := range parentsMatching(topology.RouteAttachments(j.snap, route), f.Parent) {
		matched = append(matched, a)
		listeners = append(listeners, a.Listeners...)
	}
	switch {
	case len(matched) == 0:
		o.Got = "the route names no such parent"
		o.Agrees = !f.Accepted
	case len(listeners) == 0:
		o.Got = "it attaches to no listener there"
		o.Agrees = !f.Accepted
	default:
		o.Got = "it attaches to listeners " + strings.Join(listeners, ", ")
		o.Agrees = f.Accepted
	}
	return o
}

// parentsMatching picks the route's parentRefs a status expectation is about: those naming
// the parent (by kind where it names one, as the helpers match), and of those the ones with
// its sectionName and port where it gives them and the route has such a parentRef.
func parentsMatching(all []topology.ParentAttachment, p *Ref) []topology.ParentAttachment {
	if p == nil {
		return all
	}
	var named, exact []topology.ParentAttachment
	for _, a := range all {
		k := a.Ref.Key()
		if k.Namespace != p.Namespace || k.Name != p.Name || (p.Kind != "" && k.Kind != p.Kind) {
			continue
		}
		named = append(named, a)
		if a.Ref.SectionName == p.SectionName && a.Ref.Port == p.Port {
			exact = append(exact, a)
		}
	}
	if (p.SectionName != "" || p.Port != 0) && len(exact) > 0 {
		return exact
	}
	return named
}

func acceptance(accepted bool, reason string) string {
	s := "not Accepted"
	if accepted {
		s = "Accepted"
	}
	if reason != "" && reason != "Accepted" {
		s += " (" + reason + ")"
	}
	return s
}

func (j judge) listener(f ListenerFact) Outcome {
	o := Outcome{Test: j.test, At: f.At, Judged: true}
	which := "every listener"
	if f.Listener != "" {
		which = "listener " + f.Listener
	}
	o.Fact = fmt.Sprintf("%s of %s has %d attached routes", which, f.Parent, f.AttachedRoutes)
	owner, ok := j.object(f.Parent.Kind, f.Parent)
	if !ok || owner.Gateway == nil {
		o.Got = "the parent is not in the test's manifests"
		return o
	}
	counts := topology.AttachedRoutes(j.snap, owner)
	if f.Listener != "" {
		n, ok := counts[f.Listener]
		o.Got = fmt.Sprintf("it has %d", n)
		if !ok {
			o.Got = "the parent has no such listener"
		}
		o.Agrees = ok && int64(n) == f.AttachedRoutes
		return o
	}
	var got []string
	o.Agrees = true
	for _, l := range owner.Gateway.Listeners {
		got = append(got, fmt.Sprintf("%s %d", l.Name, counts[l.Name]))
		o.Agrees = o.Agrees && int64(counts[l.Name]) == f.AttachedRoutes
	}
	o.Got = "listeners have " + strings.Join(got, ", ")
	return o
}

func (j judge) listenerSet(f ListenerSetFact) Outcome {
	o := Outcome{Test: j.test, At: f.At, Judged: f.Accepted || slices.Contains(listenerSetReasons, f.Reason)}
	o.Fact = fmt.Sprintf("ListenerSet %s/%s is %s", f.ListenerSet.Namespace, f.ListenerSet.Name, acceptance(f.Accepted, f.Reason))
	accepted, ok := j.setAccepted(f.ListenerSet)
	if !ok {
		o.Got = "the ListenerSet or its Gateway is not in the test's manifests"
		return o
	}
	o.Got = "its Gateway does not accept it"
	if accepted {
		o.Got = "its Gateway accepts it"
	}
	o.Agrees = accepted == f.Accepted
	return o
}

func (j judge) setAccepted(r Ref) (accepted, found bool) {
	set, ok := j.object("ListenerSet", r)
	if !ok || set.Gateway == nil || set.Gateway.Parent == nil {
		return false, false
	}
	gw, ok := j.snap.Object(*set.Gateway.Parent)
	if !ok || gw.Gateway == nil {
		return false, false
	}
	return slices.Contains(topology.AcceptedListenerSets(j.snap, gw), set), true
}

// gateway compares a Gateway's AttachedListenerSets. A ListenerSet the test says is not
// Accepted for a reason attachment does not decide (its listeners all conflict) is attached
// here but not counted there, so it is left out of our count.
func (j judge) gateway(f GatewayFact, sets []ListenerSetFact) Outcome {
	o := Outcome{Test: j.test, At: f.At, Judged: true}
	o.Fact = fmt.Sprintf("Gateway %s/%s has %d attached ListenerSets", f.Gateway.Namespace, f.Gateway.Name, f.AttachedListenerSets)
	gw, ok := j.object("Gateway", f.Gateway)
	if !ok || gw.Gateway == nil {
		o.Got = "the Gateway is not in the test's manifests"
		return o
	}
	var names []string
	for _, s := range topology.AcceptedListenerSets(j.snap, gw) {
		invalid := slices.ContainsFunc(sets, func(f ListenerSetFact) bool {
			return !f.Accepted && !slices.Contains(listenerSetReasons, f.Reason) && f.ListenerSet.Namespace == s.Namespace && f.ListenerSet.Name == s.Name
		})
		if !invalid {
			names = append(names, s.Namespace+"/"+s.Name)
		}
	}
	o.Got = fmt.Sprintf("it accepts %d: %s", len(names), strings.Join(names, ", "))
	o.Agrees = int64(len(names)) == f.AttachedListenerSets
	return o
}
