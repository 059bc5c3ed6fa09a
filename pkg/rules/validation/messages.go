package validation

import (
	"fmt"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Messages controls what a requester learns of namespaces other than its own: through
// the text of denials and warnings, and through the verdict itself.
type Messages struct {
	// RevealOtherNamespaces lets messages name policies in other namespaces and quote their
	// settings' values. Off by default: someone who may write policies in one namespace
	// should learn neither the names nor the contents (client IDs, issuer URLs, allow-lists)
	// of policies in namespaces they cannot read, so those are described by kind and
	// namespace, and a colliding setting by its path alone.
	RevealOtherNamespaces bool `json:"revealOtherNamespaces,omitempty"`
	// NamesFromOtherNamespaces is RevealOtherNamespaces' former name, still read: it has
	// always revealed values as well as names.
	NamesFromOtherNamespaces bool `json:"namesFromOtherNamespaces,omitempty"`
	// CompareValuesAcrossNamespaces lets a verdict depend on the values of policies in other
	// namespaces: two policies that set the same setting at one level conflict only when
	// their values differ, wherever they are. Off by default: across namespaces they
	// conflict whatever their values, because a verdict that turned on another namespace's
	// value would tell it, one dry run per guess, to whoever may write a policy beside it.
	// Within a namespace values are always compared.
	CompareValuesAcrossNamespaces bool `json:"compareValuesAcrossNamespaces,omitempty"`
}

// ComparesValues reports whether a verdict for someone writing in requesterNamespace may
// depend on the values of a policy in namespace. A nil *Messages is the default.
func (m *Messages) ComparesValues(namespace, requesterNamespace string) bool {
	return namespace == requesterNamespace || (m != nil && m.CompareValuesAcrossNamespaces)
}

// Reveals reports whether a message to someone writing in requesterNamespace may name an
// object in namespace and quote its contents. A nil *Messages is the default.
func (m *Messages) Reveals(namespace, requesterNamespace string) bool {
	return namespace == requesterNamespace || (m != nil && (m.RevealOtherNamespaces || m.NamesFromOtherNamespaces))
}

// Name names an object of kind in a message to someone writing in requesterNamespace:
// `Kind ns/name` when Reveals allows, otherwise `a Kind in namespace "ns"`, which says where
// to look without revealing what a requester may not be able to read.
func (m *Messages) Name(kind, namespace, name, requesterNamespace string) string {
	if m.Reveals(namespace, requesterNamespace) {
		if namespace == "" {
			return kind + " " + name
		}
		return kind + " " + namespace + "/" + name
	}
	return fmt.Sprintf("%s %s in namespace %q", article(kind), kind, namespace)
}

// Target names an attachment point in a message: as written when the requester named it
// (a reference) or Reveals allows, otherwise, for an object a selector reached in another
// namespace, by kind and namespace.
func (m *Messages) Target(key policy.TargetKey, selected bool, requesterNamespace string) string {
	if !selected || m.Reveals(key.Namespace, requesterNamespace) {
		return key.Shown()
	}
	return fmt.Sprintf("%s %s in namespace %q", article(key.Kind), policy.Echo(key.Kind), policy.Echo(key.Namespace))
}

// article is the indefinite article of a kind as it is read aloud: "an HTTPRoute" (an
// initialism's letter name), "an AuthPolicy", "a ColorPolicy".
func article(kind string) string {
	if kind == "" {
		return "a"
	}
	initialism := len(kind) > 1 && kind[1] >= 'A' && kind[1] <= 'Z'
	if strings.ContainsRune("AEIOU", rune(kind[0])) || (initialism && strings.ContainsRune("FHLMNRSX", rune(kind[0]))) {
		return "an"
	}
	return "a"
}
