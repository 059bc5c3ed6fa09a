package validation

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/merge"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ValidateConflicts denies a same-level conflict: another policy of the same kind attached
// at the same target and section, whose outcome against this one would depend on creation
// order alone (GEP-713 "Conflict resolution" steps 2 and 3).
//
// When two policies conflict is the kind's data (kinds.Conflicts): any second policy (none:
// GEP-713 merge strategy None), the same setting with another value (value), the same
// setting whatever its value (presence), one of the listed fields (fields), or never.
// Settings are compared in the same stanza class only (defaults against overrides at one
// level is no ambiguity: overrides win), at the row's granularity or else the coarser of
// the two blocks' strategies.
//
// Across namespaces (unless msgs compares values there), no verdict reads the other
// policy's values: two policies that set the same setting conflict whatever their values
// and ranks, and the message quotes neither side's value. Otherwise a tenant could learn
// another namespace's value by dry runs, one guess each (the guess that is admitted).
func ValidateConflicts(p *policy.Policy, snap topology.Snapshot, msgs *Messages) field.ErrorList {
	if p.Row.Conflicts.Mode == kinds.ConflictsNever || p.Row.Order == kinds.OrderNameFirst {
		// Nothing overlaps, or the implementation settles every overlap by name: either way
		// the outcome never depends on creation order (kinds.OrderNameFirst).
		return nil
	}
	var myKey string
	if k := p.Row.Conflicts.Key; k != nil {
		var ok bool
		if myKey, ok = k.Of(p.Spec()); !ok {
			return nil // no key to tell it apart by, so nothing to deny
		}
	}
	var errs field.ErrorList
	var buf [4]topology.Target
	for _, t := range topology.AppendTargets(snap, p, buf[:0]) {
		key := t.Key
		if key.Name == "" || !present(snap, key) || !servedAt(snap, p, key) {
			continue // no controller of the kind acts there, so neither policy takes effect
		}
		others := otherPolicies(snap, p, key)
		conflicting := 0
		for _, q := range others {
			if conflicting == MaxConflictingPolicies {
				break
			}
			across := !msgs.ComparesValues(q.Namespace, p.Namespace)
			if p.Rank != q.Rank && !across {
				continue // the implementation orders them by rank, not by age
			}
			var found field.ErrorList
			where := msgs.Target(key, t.Selected, p.Namespace)
			switch p.Row.Conflicts.Mode {
			case kinds.ConflictsNone:
				found = field.ErrorList{field.Forbidden(t.Path, fmt.Sprintf(
					"%s already has %s; %s allows one policy per target and section (GEP-713 merge strategy None: the oldest wins)",
					where, msgs.Name(q.Row.Kind, q.Namespace, q.Name, p.Namespace), oneAllowed(p.Row)))}
			case kinds.ConflictsKey:
				found = keyConflicts(msgs, p, q, t.Path, where, myKey, across)
			default:
				found = settingConflicts(msgs, p, q, where, across)
			}
			if len(found) > 0 {
				conflicting++
				errs = append(errs, found...)
			}
		}
	}
	return withReason(ReasonConflicted, errs...)
}

// present reports whether the attachment point key exists: its object, and the section it
// names where the object has sections. Two policies at a target that does not exist yet
// conflict with each other only once it does; until then the implementation judges neither
// (Envoy Gateway writes no status; a section it cannot find leaves both not Accepted), and
// the target may arrive later in the same apply. Such a policy is warned TargetNotFound or
// SectionNotFound (WarnMissingTargets). A target of a kind the webhook does not read is taken
// to exist: its absence says nothing. A listener that loses a listener conflict exists: the
// implementation finds a policy's section among the listeners its Gateway or ListenerSet
// lists, accepted or not, and refuses the younger of two there as Conflicted all the same
// (Envoy Gateway v1.9.1 backendtrafficpolicy.go resolveBackendTrafficPolicyListenerSetTargetRef,
// clienttrafficpolicy.go claimedSections); it is warned ListenerConflicted.
func present(snap topology.Snapshot, key policy.TargetKey) bool {
	obj, found := snap.Object(key)
	if !found {
		info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: key.Group, Kind: key.Kind})
		return !info.Watched
	}
	return key.Section == "" || !obj.HasSections() || obj.HasSection(key.Section)
}

// MaxConflictingPolicies bounds the policies one target's conflicts are reported against
// (the highest first). One is enough to deny; where Warn or DryRun let conflicting policies
// pile up, judging and rendering every one would make each review cost more than the last.
const MaxConflictingPolicies = 10

// otherPolicies returns the policies of p's kind at key, minus p itself (an UPDATE never
// conflicts with its own stored version), highest first.
func otherPolicies(snap topology.Snapshot, p *policy.Policy, key policy.TargetKey) []*policy.Policy {
	var out []*policy.Policy
	for _, q := range snap.PoliciesAt(p.GroupKind(), key) {
		if q.Namespace == p.Namespace && q.Name == p.Name {
			continue
		}
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Higher(out[j]) })
	return out
}

// keyConflicts reports q as a conflict of p where both have the key mine (mode key). Across
// namespaces q's key is not read: any second policy there conflicts, and the message
// quotes no key.
func keyConflicts(msgs *Messages, p, q *policy.Policy, path *field.Path, where, mine string, across bool) field.ErrorList {
	k := p.Row.Conflicts.Key
	name := msgs.Name(q.Row.Kind, q.Namespace, q.Name, p.Namespace)
	if across {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"%s already has %s, whose %s is not compared across namespaces; %s allows one policy per target, section and %s (the first wins)",
			where, name, k.Name, p.Row.Kind, k.Name))}
	}
	theirs, ok := k.Of(q.Spec())
	if !ok || theirs != mine {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
		"%s already has %s with the same %s (%q, from `%s`); %s allows one policy per target, section and %s (the first wins)",
		where, name, k.Name, policy.Echo(mine), k.Field, p.Row.Kind, k.Name))}
}

// oneAllowed names, for the none mode's message, what allows one policy per point.
func oneAllowed(row *kinds.KindRow) string {
	if row.Class == kinds.Direct {
		return "a Direct policy kind"
	}
	return row.Kind
}

// settingConflicts compares every block of p with the blocks of q in the same class,
// setting by setting (modes value, presence and fields); across says q is in a namespace
// whose values the verdict may not read.
func settingConflicts(msgs *Messages, p, q *policy.Policy, where string, across bool) field.ErrorList {
	var errs field.ErrorList
	mode := p.Row.Conflicts.Mode
	qBlocks := q.Blocks()
	for _, pb := range p.Blocks() {
		for _, qb := range qBlocks {
			if pb.Class != qb.Class {
				continue // defaults vs overrides at one level: overrides win, no ambiguity
			}
			theirs := map[string]any{}
			for _, s := range comparedSettings(q.Row, qb, pb) {
				theirs[s.Path] = s.Value
			}
			for _, s := range comparedSettings(p.Row, pb, qb) {
				other, ok := theirs[s.Path]
				if !ok || (mode == kinds.ConflictsValue && !across && merge.SameValue(other, s.Value)) {
					continue
				}
				name := msgs.Name(q.Row.Kind, q.Namespace, q.Name, p.Namespace)
				var detail string
				switch {
				case mode != kinds.ConflictsValue:
					detail = presenceDetail(name, where, pb, s)
				case across:
					detail = acrossDetail(name, where, pb, s, msgs.Reveals(q.Namespace, p.Namespace), other)
				case msgs.Reveals(q.Namespace, p.Namespace):
					detail = conflictDetail(name, where, pb, s, render(other))
				default:
					detail = conflictDetail(name, where, pb, s, "a different value")
				}
				errs = append(errs, field.Forbidden(settingPath(pb.Path, policy.Echo(shownPath(s))), detail))
			}
		}
	}
	return errs
}

// comparedSettings are the settings of block b that a conflict with block other is looked
// for in: the listed fields (mode fields), or every setting at the row's granularity, else
// at the coarser of the two blocks' strategies.
func comparedSettings(row *kinds.KindRow, b, other policy.Block) []merge.Setting {
	if row.Conflicts.Mode == kinds.ConflictsFields {
		return merge.FieldsOf(b, row.Conflicts.Fields)
	}
	strategy := row.Conflicts.Granularity
	if strategy == "" {
		strategy = merge.CoarserStrategy(b.Strategy, other.Strategy)
	}
	return merge.SettingsOf(b, strategy, row.NamedRules)
}

// presenceDetail says which other policy also sets the setting, without its value: in
// modes presence and fields the value does not matter.
func presenceDetail(other, where string, b policy.Block, s merge.Setting) string {
	what := fmt.Sprintf("%s %q", b.Class, policy.Echo(shownPath(s)))
	if s.Path == "" {
		what = fmt.Sprintf("atomic %s", b.Class)
	}
	return fmt.Sprintf("%s on %s also sets %s; at one level the winner would depend on creation order alone, so use different settings or attach at another level",
		other, where, what)
}

// conflictDetail says which other policy sets what to which value, each as the requester
// may see it: theirs is the other value rendered, or "a different value" where the other
// policy's namespace is not the requester's to read.
func conflictDetail(other, where string, b policy.Block, s merge.Setting, theirs string) string {
	what := fmt.Sprintf("%s %q", b.Class, policy.Echo(shownPath(s)))
	if s.Path == "" {
		what = fmt.Sprintf("atomic %s", b.Class)
	}
	return fmt.Sprintf("%s on %s also sets %s to %s (this policy: %s); at one level the winner would depend on creation order alone, so set the same value, use different settings, or attach at another level",
		other, where, what, theirs, render(s.Value))
}

// acrossDetail says that a policy in another namespace sets the same setting. Unless msgs
// reveals that namespace it quotes neither value, not even the requester's own, so that the
// text is the same whatever the requester tried: across namespaces values decide nothing.
func acrossDetail(other, where string, b policy.Block, s merge.Setting, reveals bool, theirs any) string {
	what := fmt.Sprintf("%s %q", b.Class, policy.Echo(shownPath(s)))
	if s.Path == "" {
		what = fmt.Sprintf("atomic %s", b.Class)
	}
	if reveals {
		what += fmt.Sprintf(" to %s (this policy: %s)", render(theirs), render(s.Value))
	}
	return fmt.Sprintf("%s on %s also sets %s; %s", other, where, what, AcrossNamespacesDetail)
}

// AcrossNamespacesDetail ends every Conflicted detail between policies of two namespaces
// whose values the verdict does not compare.
const AcrossNamespacesDetail = "across namespaces two policies that set the same setting at one level conflict whatever their values (no verdict depends on what another namespace's policy says), so use different settings or attach at another level"

// shownPath is where a setting sits in its block, as the requester wrote it.
func shownPath(s merge.Setting) string {
	if s.Field != "" {
		return s.Field
	}
	return s.Path
}

// settingPath is the field path of a setting inside a block ("spec.defaults.colors.light",
// "spec.jsonPatches[2].operation.value").
func settingPath(block *field.Path, dotted string) *field.Path {
	if dotted == "" {
		return block
	}
	p := block
	start := 0
	for i := 0; i <= len(dotted); i++ {
		if i == len(dotted) || dotted[i] == '.' {
			seg := dotted[start:i]
			if name, index, ok := indexed(seg); ok {
				p = p.Child(name).Index(index)
			} else {
				p = p.Child(seg)
			}
			start = i + 1
		}
	}
	return p
}

// indexed splits "name[3]" into name and 3.
func indexed(seg string) (string, int, bool) {
	open := strings.IndexByte(seg, '[')
	if open <= 0 || !strings.HasSuffix(seg, "]") {
		return "", 0, false
	}
	i, err := strconv.Atoi(seg[open+1 : len(seg)-1])
	if err != nil {
		return "", 0, false
	}
	return seg[:open], i, true
}

// render shows a value compactly in a message.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
