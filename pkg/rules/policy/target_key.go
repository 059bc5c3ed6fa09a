package policy

// TargetKey identifies one attachment point: an object, or a named section of one.
type TargetKey struct {
	Group, Kind, Namespace, Name, Section string
}

// String renders the key the way messages and annotations name targets.
func (k TargetKey) String() string {
	s := k.Kind + " " + k.Namespace + "/" + k.Name
	if k.Namespace == "" {
		s = k.Kind + " " + k.Name
	}
	if k.Section != "" {
		s += " section " + k.Section
	}
	return s
}

// Object returns the key without its section.
func (k TargetKey) Object() TargetKey {
	k.Section = ""
	return k
}
