package topology

import (
	"slices"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// PathsOf returns the distinct context paths a policy's targets reach.
func PathsOf(snap Snapshot, p *policy.Policy) []ContextPath { return AppendPathsOf(snap, p, nil) }

// AppendPathsOf is PathsOf appending to into, so a caller can reuse one buffer.
func AppendPathsOf(snap Snapshot, p *policy.Policy, into []ContextPath) []ContextPath {
	out, _ := AppendServedPathsOf(snap, p, into)
	return out
}

// AppendServedPathsOf is AppendPathsOf, also counting the paths it left out because no
// controller of p's kind serves the Gateways they run through (a path reached through two
// targets counts twice there).
func AppendServedPathsOf(snap Snapshot, p *policy.Policy, into []ContextPath) ([]ContextPath, int) {
	notServed := 0
	for _, key := range TargetKeys(snap, p) {
		if _, ok := p.Row.Target(key.Group, key.Kind); !ok {
			continue // a kind the implementation does not attach this kind of policy to
		}
		var n int
		into, n = pathsThrough(snap, p.Row, key, into)
		notServed += n
	}
	return distinctPaths(into), notServed // in place
}

// pairwiseUpTo is how many values (paths, keys) are compared pairwise before a set is
// worth building.
const pairwiseUpTo = 32

// distinctPaths drops repeated paths in place, keeping the first of each.
func distinctPaths(paths []ContextPath) []ContextPath {
	out := paths[:0]
	if len(paths) <= pairwiseUpTo {
		for _, c := range paths {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	seen := make(map[ContextPath]struct{}, len(paths)) // paths are comparable values
	for _, c := range paths {
		if _, dup := seen[c]; !dup {
			seen[c] = struct{}{}
			out = append(out, c)
		}
	}
	return out
}
