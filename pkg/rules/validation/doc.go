// Package validation holds the checks behind each stable reason, one file per reason:
// InvalidTargetRef (invalid_target_ref.go), RefNotPermitted (ref_not_permitted.go),
// MultipleMergeStrategies (multiple_merge_strategies.go), Conflicted (conflicted.go), and the
// warnings of what is only "not yet" (target_not_found.go). Each check is a Rule: a pure
// function of the policy and the snapshot returning a field.ErrorList whose errors carry
// their reason as Origin (and at the front of their detail, for people). Rules lists them
// in the order denials are reported.
package validation
