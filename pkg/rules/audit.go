package rules

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Finding is a stored policy the rules would deny today: it was created before the webhook
// was installed, while it was down, or while its rule was in Warn or DryRun.
type Finding struct {
	Policy  *Policy
	Denials field.ErrorList
	// Modes holds the configured mode of each denial, by index: what admission would do
	// with it now.
	Modes []Mode
}

// Auditor replays stored policies in GEP-713 order (oldest first, then namespace/name):
// each is judged against every non-policy object and the older policies that passed, as if
// the webhook had been admitting them one by one since the beginning. Of two conflicting
// policies the younger is the finding, as the oldest wins (GEP-713 "Conflict resolution").
//
// Audit readers are platform operators who can read the whole cluster, so messages name
// policies in every namespace.
type Auditor struct {
	settings *Settings
	judge    *Settings
	denied   map[auditID]bool
}

type auditID struct {
	kind            schema.GroupKind
	namespace, name string
}

// NewAuditor starts an audit whose findings carry the modes of settings (nil: all Deny).
func NewAuditor(settings *Settings) *Auditor {
	judge := &Settings{Messages: Messages{NamesFromOtherNamespaces: true}}
	return &Auditor{settings: settings, judge: judge, denied: map[auditID]bool{}}
}

// SortForAudit orders policies as the audit must see them: GEP-713 order.
func SortForAudit(policies []*Policy) {
	sort.SliceStable(policies, func(i, j int) bool { return policies[i].Higher(policies[j]) })
}

// Judge audits one policy against snap; policies must come in SortForAudit order.
func (a *Auditor) Judge(snap Snapshot, p *Policy) (Finding, bool) {
	view := &auditView{Snapshot: snap, current: p, denied: a.denied}
	v := Evaluate(Request{Operation: Update, Policy: p, OldPolicy: p, Settings: a.judge}, view)
	if v.Allowed() {
		return Finding{}, false
	}
	a.denied[auditID{p.GroupKind(), p.Namespace, p.Name}] = true
	f := Finding{Policy: p, Denials: v.Denials, Modes: make([]Mode, len(v.Denials))}
	labels := NamespaceLabels(snap, p.Namespace)
	for i, e := range v.Denials {
		f.Modes[i] = a.settings.ModeFor(ReasonOf(e), p, labels)
	}
	return f, true
}

// Audit judges every policy in snap and returns the findings in GEP-713 order.
func Audit(snap *MemorySnapshot, settings *Settings) (findings []Finding, audited int) {
	policies := snap.Policies()
	SortForAudit(policies)
	a := NewAuditor(settings)
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
	Snapshot
	current *Policy
	denied  map[auditID]bool
}

func (v *auditView) PoliciesAt(kind schema.GroupKind, key TargetKey) []*Policy {
	return v.keep(v.Snapshot.PoliciesAt(kind, key))
}

func (v *auditView) PoliciesIn(kind schema.GroupKind, namespace string) []*Policy {
	return v.keep(v.Snapshot.PoliciesIn(kind, namespace))
}

// keep filters a list, copying only when something goes.
func (v *auditView) keep(list []*Policy) []*Policy {
	for i, q := range list {
		if v.hidden(q) {
			out := append([]*Policy(nil), list[:i]...)
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

func (v *auditView) hidden(q *Policy) bool {
	if q == v.current || (q.Namespace == v.current.Namespace && q.Name == v.current.Name && q.GroupKind() == v.current.GroupKind()) {
		return false
	}
	return v.current.Higher(q) || v.denied[auditID{q.GroupKind(), q.Namespace, q.Name}]
}
