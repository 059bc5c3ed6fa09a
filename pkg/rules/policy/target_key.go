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

// Shown is String with each part as a message may repeat it (Echo): what denials,
// warnings and annotations print of a target a requester named.
func (k TargetKey) Shown() string {
	return TargetKey{Kind: Echo(k.Kind), Namespace: Echo(k.Namespace), Name: Echo(k.Name), Section: Echo(k.Section)}.String()
}

// Object returns the key without its section.
func (k TargetKey) Object() TargetKey {
	k.Section = ""
	return k
}
