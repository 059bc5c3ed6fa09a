package validation

import (
	"fmt"
	"strconv"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// precedence says, in ListenerConflicted warnings, which of two conflicting listeners
// Gateway API accepts (apis/v1 listenerset_types.go ListenerSetSpec.Listeners, v1.7.0).
const precedence = "Gateway API accepts the first of the two: the Gateway's own listeners, then ListenerSets' oldest first, then by namespace/name"

// warnListenerConflicted warns, never denies, when a reference names by sectionName a
// listener that loses a listener conflict (topology.LostListener): the implementation builds
// nothing for it, so the policy takes effect nowhere through it until the conflict is gone.
// Policies there are still judged against each other (ValidateConflicts): the
// implementation finds a policy's section among the names its Gateway or ListenerSet lists,
// accepted or not (Envoy Gateway v1.9.1 validate.go validateListenerSetListenerSectionName).
// The listener it loses to is named only where the requester may read its namespace
// (Messages' default), otherwise by its owner's kind and namespace.
func warnListenerConflicted(p *policy.Policy, ref policy.TargetRef, key policy.TargetKey, snap topology.Snapshot) (string, bool) {
	c, lost := topology.LostListener(snap, key)
	if !lost {
		return "", false
	}
	owner, _ := snap.Object(key.Object())
	own, _ := topology.ListenerRef{Owner: owner, Name: key.Section}.Listener()
	winner, _ := c.With.Listener()
	var msgs *Messages
	other := c.With.Owner
	with := "listener " + strconv.Quote(policy.Echo(c.With.Name)) + " of " + msgs.Name(other.Kind, other.Namespace, policy.Echo(other.Name), p.Namespace)
	switch {
	case other.Key() == key.Object():
		with = "listener " + strconv.Quote(policy.Echo(c.With.Name)) + " of the same " + other.Kind
	case !msgs.Reveals(other.Namespace, p.Namespace):
		with = "a listener of " + msgs.Name(other.Kind, other.Namespace, "", p.Namespace)
	}
	var why string
	switch {
	case own.Protocol == "TCP" && winner.Protocol == "HTTP":
		why = fmt.Sprintf("it is a TCP listener on port %d, where %s serves HTTP, and Gateway API accepts no TCP listener on a port with HTTP, HTTPS or TLS listeners", c.Port, with)
	case own.Protocol == "TCP" || own.Protocol == "UDP":
		why = fmt.Sprintf("it is a %s listener on port %d, as %s is, and a port has one %s listener; %s", own.Protocol, c.Port, with, own.Protocol, precedence)
	case own.Hostname == "":
		why = fmt.Sprintf("it has the port (%d) and protocol (%s) of %s, and no hostname, as that one; %s", c.Port, own.Protocol, with, precedence)
	default:
		why = fmt.Sprintf("it has the port (%d), protocol (%s) and hostname (%q) of %s; %s", c.Port, own.Protocol, policy.Echo(own.Hostname), with, precedence)
	}
	return fmt.Sprintf("%s: %s: listener %q of %s is not accepted (%s): %s; the policy takes effect through it once the conflict is gone",
		WarningListenerConflicted, ref.Path.Child("sectionName"), policy.Echo(key.Section), key.Object().Shown(), c.Reason, why), true
}
