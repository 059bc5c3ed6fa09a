// Package impact answers GEP-713's discoverability questions for accepted policies: where
// a policy is enforced, what it overrides and what overrides it (Of, and the annotations the
// mutating webhook writes), per ancestor and target in GEP-5058's vocabulary (Predict), the
// effective policy on every context path (Explain), what a deletion would take away
// (deletion warnings), which stored policies the rules would deny today (Audit), and where
// the status a policy's controller wrote disagrees with the prediction (ObservedOf,
// Comparer, CompareAll; each kind row's statusConditions says how to read that status). It
// reads the same snapshot as the verdicts and calls rules.Evaluate.
package impact
