package impact

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
	"github.com/policyattachment/webhook/pkg/rules/validation"
)

// Finding is a stored policy the rules would deny today: it was created before the webhook
// was installed, while it was down, or while its rule was in Warn or DryRun.
type Finding struct {
	Policy  *policy.Policy
	Denials field.ErrorList
	// Modes holds the configured mode of each denial, by index: what admission would do
	// with it now.
	Modes []rules.Mode
}

// Auditor replays stored policies in GEP-713 order (oldest first, then namespace/name):
// each is judged against every non-policy object and the older policies that passed, as if
// the webhook had been admitting them one by one since the beginning. Of two conflicting
// policies the younger is the finding, as the oldest wins (GEP-713 "Conflict resolution").
//
// Audit readers are platform operators who can read the whole cluster, so messages name
// policies in every namespace.
type Auditor struct {
	config *rules.Config
	judge  *rules.Config
	denied map[auditID]bool
}

type auditID struct {
	kind            schema.GroupKind
	namespace, name string
}

// NewAuditor starts an audit whose findings carry the modes of config (nil: all Deny). Its
// verdicts are admission's (values compared across namespaces only where config says so);
// its messages name every namespace.
func NewAuditor(config *rules.Config) *Auditor {
	judge := &rules.Config{Messages: validation.Messages{RevealOtherNamespaces: true}}
	if msgs := config.MessagesOrNil(); msgs != nil {
		judge.Messages.CompareValuesAcrossNamespaces = msgs.CompareValuesAcrossNamespaces
	}
	return &Auditor{config: config, judge: judge, denied: map[auditID]bool{}}
}

// SortForAudit orders policies as the audit must see them: GEP-713 order.
func SortForAudit(policies []*policy.Policy) {
	sort.SliceStable(policies, func(i, j int) bool { return policies[i].Higher(policies[j]) })
}

// Judge audits one policy against snap; policies must come in SortForAudit order.
func (a *Auditor) Judge(snap topology.Snapshot, p *policy.Policy) (Finding, bool) {
	view := &auditView{Snapshot: snap, current: p, denied: a.denied}
	v := rules.Evaluate(rules.Request{Operation: rules.Update, Policy: p, OldPolicy: p, Config: a.judge}, view)
	if v.Allowed() {
		return Finding{}, false
	}
	a.denied[auditID{p.GroupKind(), p.Namespace, p.Name}] = true
	f := Finding{Policy: p, Denials: v.Denials, Modes: make([]rules.Mode, len(v.Denials))}
	labels := topology.NamespaceLabels(snap, p.Namespace)
	for i, e := range v.Denials {
		f.Modes[i] = a.config.ModeFor(validation.ReasonOf(e), p, labels)
	}
	return f, true
}

// ForReaders makes the auditor's messages what msgs lets a policy's own readers see (the
// tenant rules of admission) instead of naming every namespace: for reports written into
// each policy's namespace.
func (a *Auditor) ForReaders(msgs validation.Messages) *Auditor {
	a.judge = &rules.Config{Messages: msgs}
	return a
}

// Audit judges every policy in snap and returns the findings in GEP-713 order.
func Audit(snap topology.State, config *rules.Config) (findings []Finding, audited int) {
	return AuditWith(NewAuditor(config), snap)
}

// AuditWith is Audit with an auditor of the caller's.
func AuditWith(a *Auditor, snap topology.State) (findings []Finding, audited int) {
	policies := snap.Policies()
	SortForAudit(policies)
	for _, p := range policies {
		if f, ok := a.Judge(snap, p); ok {
			findings = append(findings, f)
		}
	}
	return findings, len(policies)
}

// auditView is the snapshot as it stood when current was admitted: younger policies are
// not there yet, and policies the audit already found would have been denied.
type auditView struct {
	topology.Snapshot
	current *policy.Policy
	denied  map[auditID]bool
}

func (v *auditView) PoliciesAt(kind schema.GroupKind, key policy.TargetKey) []*policy.Policy {
	return v.keep(v.Snapshot.PoliciesAt(kind, key))
}

func (v *auditView) SelectingPolicies(kind schema.GroupKind) []*policy.Policy {
	return v.keep(v.Snapshot.SelectingPolicies(kind))
}

func (v *auditView) PoliciesIn(kind schema.GroupKind, namespace string) []*policy.Policy {
	return v.keep(v.Snapshot.PoliciesIn(kind, namespace))
}

// keep filters a list, copying only when something goes.
func (v *auditView) keep(list []*policy.Policy) []*policy.Policy {
	for i, q := range list {
		if v.hidden(q) {
			out := append([]*policy.Policy(nil), list[:i]...)
			for _, r := range list[i+1:] {
				if !v.hidden(r) {
					out = append(out, r)
				}
			}
			return out
		}
	}
	return list
}

func (v *auditView) hidden(q *policy.Policy) bool {
	if q == v.current || (q.Namespace == v.current.Namespace && q.Name == v.current.Name && q.GroupKind() == v.current.GroupKind()) {
		return false
	}
	return v.current.Higher(q) || v.denied[auditID{q.GroupKind(), q.Namespace, q.Name}]
}
