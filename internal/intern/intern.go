// Package intern keeps one copy of the strings that repeat across the objects a snapshot
// holds (groups, kinds, namespaces, section names), so that tens of thousands of objects
// share them: less memory, and fewer strings for the garbage collector to visit.
package intern

import "unique"

// String returns the canonical copy of s.
func String(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
