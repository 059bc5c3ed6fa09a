// Package merge folds the policies of one kind along one context path into the effective
// policy (GEP-713 "Hierarchy" and "Merge strategies", and the Kuadrant Defaults & Overrides
// RFC): each strategy is a named function, and each effective setting remembers the policy
// that supplied it. It also flattens blocks into settings for comparison, and says when two
// values are the same JSON value.
package merge
