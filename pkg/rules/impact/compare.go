package impact

import (
	"fmt"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Classes of disagreement between a controller's status and the prediction.
const (
	// ClassRefusedByController: the controller refused (Accepted=False) a policy the rules
	// admit.
	ClassRefusedByController = "refusedByController"
	// ClassDeniedByWebhook: the rules would deny a policy the controller accepted.
	ClassDeniedByWebhook = "deniedByWebhook"
	// ClassStatusDiffers: both accept it, and the controller's conditions do not agree with
	// the predicted impact (predicted Enforced where it says Overridden, ...).
	ClassStatusDiffers = "statusDiffers"
)

// DisagreementClasses lists the classes, for metrics that publish every one.
var DisagreementClasses = []string{ClassRefusedByController, ClassDeniedByWebhook, ClassStatusDiffers}

// Denied is what a prediction says of a policy the rules deny today.
const Denied = "Denied"

// Disagreement is one entry of a policy's status (an ancestor, or a GEP-5058 target under
// one, or the policy as a whole) where the controller and the prediction part ways, with
// both sides.
type Disagreement struct {
	Policy *policy.Policy
	Class  string
	// Controller is the controllerName of the entry (for a status of the policy as a whole,
	// the one its row names, if any); Ancestor its ancestorRef (zero for the policy as a
	// whole); Target the GEP-5058 target entry compared, if any.
	Controller string
	Ancestor   ObjectRef
	Target     *ObjectRef
	// Theirs are the conditions that decided the controller's side, TheirMeaning what they
	// mean in the webhook's terms (impact statuses that agree, or Refused).
	Theirs       []kinds.Condition
	TheirMeaning []string
	// Ours is the predicted impact status over the paths under the ancestor (and through the
	// target), or Denied with the reasons in DeniedFor; Contexts counts those paths.
	Ours      string
	DeniedFor []string
	Contexts  int
}

// Where names the entry compared: "Gateway infra/gw", "HTTPRoute app/r at Gateway
// infra/gw", "the policy".
func (d Disagreement) Where() string {
	where := "the policy"
	if d.Ancestor != (ObjectRef{}) {
		where = d.Ancestor.String()
	}
	if d.Target != nil {
		where = d.Target.String() + " at " + where
	}
	return where
}

// TheirsText renders the controller's side: its deciding conditions, type=status (reason):
// message.
func (d Disagreement) TheirsText() string {
	parts := make([]string, 0, len(d.Theirs))
	for _, c := range d.Theirs {
		s := c.Type + "=" + c.Status
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// OursText renders the prediction: "Enforced on 2 paths", "denied (Conflicted)".
func (d Disagreement) OursText() string {
	if d.Ours == Denied {
		return "denied (" + strings.Join(d.DeniedFor, ", ") + ")"
	}
	return fmt.Sprintf("%s on %d %s", d.Ours, d.Contexts, pathNoun(nil, d.Contexts))
}

// Message is one sentence with both sides.
func (d Disagreement) Message() string {
	who := "the controller"
	if d.Controller != "" {
		who = d.Controller
	}
	switch d.Class {
	case ClassRefusedByController:
		return fmt.Sprintf("%s: %s refused it (%s); the rules admit it, predicting %s", d.Where(), who, d.TheirsText(), d.OursText())
	case ClassDeniedByWebhook:
		return fmt.Sprintf("%s: %s accepted it (%s); the rules would deny it today (%s)", d.Where(), who, d.TheirsText(), strings.Join(d.DeniedFor, ", "))
	default:
		return fmt.Sprintf("%s: predicted %s; %s says %s", d.Where(), d.OursText(), who, d.TheirsText())
	}
}

// Comparer compares what controllers wrote into policies' statuses with the predictions for
// them in one snapshot, sharing the fold's cache across policies.
type Comparer struct {
	snap  topology.Snapshot
	cache *merge.Cache
}

// NewComparer starts comparing against snap.
func NewComparer(snap topology.Snapshot) *Comparer {
	return &Comparer{snap: snap, cache: merge.NewCache()}
}

// Compare compares seen, what the controllers wrote into p's status, with the prediction for
// p; denied are the reasons the rules would deny p today (an audit finding's), none when
// they admit it. It returns how many entries it compared (stale entries, and those whose
// conditions the row does not read, are not) and where they disagree.
func (c *Comparer) Compare(p *policy.Policy, seen *ObservedStatus, denied []string) (compared int, out []Disagreement) {
	if seen == nil {
		return 0, nil
	}
	rec := &pathRecord{}
	of(c.snap, p, c.cache, nil, rec)
	defer rec.release()
	finder := ancestorFinder{snap: c.snap, routesLeft: maxAncestorRoutes}
	keys := make([]policy.TargetKey, 0, topology.MaxPathKeys)
	for _, e := range seen.Entries {
		if e.Stale {
			continue
		}
		var under func(topology.ContextPath) bool
		if e.Ancestor != (ObjectRef{}) {
			a := e.Ancestor.key()
			under = func(cp topology.ContextPath) bool {
				keys = cp.AppendKeys(keys[:0])
				return slices.Contains(keys, a) || (a.Section == "" && slices.Contains(finder.of(cp), a))
			}
		}
		judge := func(conditions []kinds.Condition, target *ObjectRef, keep func(topology.ContextPath) bool) {
			means, by := p.Row.StatusMeaning(conditions)
			if len(means) == 1 && means[0] == kinds.MeansUnknown {
				return
			}
			t := rec.over(keep)
			ours := t.status()
			if len(denied) > 0 {
				ours = Denied
			}
			compared++
			class := disagreement(means, ours, kinds.Refuses(by))
			if class == "" {
				return
			}
			out = append(out, Disagreement{Policy: p, Class: class, Controller: e.Controller, Ancestor: e.Ancestor, Target: target,
				Theirs: by, TheirMeaning: means, Ours: ours, DeniedFor: denied, Contexts: t.contexts()})
		}
		if len(e.Targets) == 0 {
			judge(e.Conditions, nil, under)
			continue
		}
		for _, tg := range e.Targets {
			if tg.Stale {
				continue
			}
			k := tg.Target.key()
			judge(tg.Conditions, &tg.Target, func(cp topology.ContextPath) bool {
				if under != nil && !under(cp) {
					return false
				}
				keys = cp.AppendKeys(keys[:0])
				return slices.Contains(keys, k)
			})
		}
	}
	return compared, out
}

// disagreement classes a pair of sides, "" when they agree; refusal says the controller
// wrote Accepted=False. A refusal agrees with a denial whatever the reasons, and with a
// prediction that the policy applies nowhere there (no path, or Overridden on every one: the
// loser of a conflict, whose winner the audit may have found itself); any other refusal of a
// policy the rules admit is refusedByController. A controller's NoTargets (the
// policy applies nowhere) agrees with a denial too. A prediction that reaches no path under
// the ancestor agrees with any acceptance: implementations judge attachment by scopes (a
// Gateway with no routes accepts a policy), the webhook by traffic paths.
func disagreement(means []string, ours string, refusal bool) string {
	refusal = refusal || (len(means) == 1 && means[0] == kinds.MeansRefused)
	nowhere := len(means) == 1 && means[0] == StatusNoTargets
	switch {
	case refusal && (ours == Denied || ours == StatusNoTargets || ours == StatusOverridden || slices.Contains(means, ours)):
		return ""
	case refusal:
		return ClassRefusedByController
	case ours == Denied && nowhere:
		return ""
	case ours == Denied:
		return ClassDeniedByWebhook
	case ours == StatusNoTargets, slices.Contains(means, ours):
		return ""
	default:
		return ClassStatusDiffers
	}
}

// CompareAll compares the status observed of every policy in snap that has one with its
// prediction; findings are the audit's (a policy with one is predicted Denied). Policies
// come in snap's order (kind, namespace, name).
func CompareAll(snap topology.State, observed *Observations, findings []Finding) (compared int, out []Disagreement) {
	if observed.Len() == 0 {
		return 0, nil
	}
	denied := map[*policy.Policy][]string{}
	for _, f := range findings {
		denied[f.Policy] = ReasonsOf(f)
	}
	c := NewComparer(snap)
	for _, p := range snap.Policies() {
		n, d := c.Compare(p, observed.Of(p), denied[p])
		compared += n
		out = append(out, d...)
	}
	return compared, out
}

// ReasonsOf lists a finding's reasons, each once.
func ReasonsOf(f Finding) []string {
	var out []string
	for _, e := range f.Denials {
		if r := validation.ReasonOf(e); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
