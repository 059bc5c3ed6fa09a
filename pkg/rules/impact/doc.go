// Package impact answers GEP-713's discoverability questions for accepted policies: where
// a policy is enforced, what it overrides and what overrides it (Of, and the annotations the
// mutating webhook writes), the effective policy on every context path (Explain), what a
// deletion would take away (deletion warnings), and which stored policies the rules would
// deny today (Audit). It reads the same snapshot as the verdicts and calls rules.Evaluate.
package impact
