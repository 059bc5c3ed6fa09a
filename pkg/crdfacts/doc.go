// Package crdfacts reads what a policy kind's CustomResourceDefinition says about its
// targets and references (FactsOf: target fields, targetRefs' maxItems, the target kinds and
// groups its enums and CEL rules admit, per-field target rules, reference fields), compares
// a kind row with it (Compare), and derives the row to judge by on a cluster that runs it
// (Derive: the row, widened where the CRD admits more).
//
// The doors that read a cluster derive the built-in rows from the installed CRDs
// (pkg/clusterstate); `make kinds-drift` and the kinds test compare the rows with the CRDs
// the implementations release (test/kindsdrift). Like the engine, it is pure: it imports
// the kind table and API machinery, never a client.
package crdfacts
