package validation

// Formats from Gateway API's shared types (apis/v1/shared_types.go: Group, Kind, Namespace,
// SectionName, ObjectName), so we deny exactly what the API types declare invalid. They are
// matched by hand: every review checks every reference, and the regular expressions
// (kept in the tests, which compare both) were a tenth of a review's CPU.
var (
	groupPattern       = formatPattern{emptyOK: true, dots: true}      // ^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
	kindPattern        = formatPattern{upper: true, letterFirst: true} // ^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$
	namespacePattern   = formatPattern{}                               // ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
	sectionNamePattern = formatPattern{dots: true}                     // ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
	objectNamePattern  = formatPattern{dots: true}                     // RFC 1123 subdomain (validation.IsDNS1123Subdomain)
)

// formatPattern matches DNS-style names: labels of letters and digits with inner '-',
// separated by '.' when dots is set.
type formatPattern struct {
	emptyOK     bool // the empty string matches
	dots        bool // several labels separated by '.'
	upper       bool // upper-case letters allowed
	letterFirst bool // the first character is a letter
}

// MatchString reports whether s has the format.
func (f formatPattern) MatchString(s string) bool {
	if s == "" {
		return f.emptyOK
	}
	if f.letterFirst && !isLetter(s[0], f.upper) {
		return false
	}
	labelStart := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !isLetter(c, f.upper) && !(c >= '0' && c <= '9') && c != '-' {
				return false
			}
			continue
		}
		// A label ends at i: non-empty, no '-' at either end.
		if i < len(s) && !f.dots {
			return false
		}
		if i == labelStart || s[labelStart] == '-' || s[i-1] == '-' {
			return false
		}
		labelStart = i + 1
	}
	return true
}

func isLetter(c byte, upper bool) bool {
	return (c >= 'a' && c <= 'z') || (upper && c >= 'A' && c <= 'Z')
}

const (
	maxGroupLength     = 253
	maxKindLength      = 63
	maxNameLength      = 253
	maxNamespaceLength = 63
	maxSectionLength   = 253
)
