package validation

import "fmt"

// Messages controls how denials and warnings name objects outside the requester's
// namespace.
type Messages struct {
	// NamesFromOtherNamespaces lets messages name policies in other namespaces. Off by
	// default: someone who may write policies in one namespace should not learn the names of
	// objects in namespaces they cannot read, so those are described by kind and namespace.
	NamesFromOtherNamespaces bool `json:"namesFromOtherNamespaces,omitempty"`
}

// Name names an object of kind in a message to someone writing in requesterNamespace:
// `Kind ns/name` when the object is in that namespace or the settings allow names from
// other namespaces, otherwise `a Kind in namespace "ns"`, which says where to look
// without revealing what a requester may not be able to read. A nil *Messages is the
// default.
func (m *Messages) Name(kind, namespace, name, requesterNamespace string) string {
	if namespace == requesterNamespace || (m != nil && m.NamesFromOtherNamespaces) {
		if namespace == "" {
			return kind + " " + name
		}
		return kind + " " + namespace + "/" + name
	}
	return fmt.Sprintf("a %s in namespace %q", kind, namespace)
}
