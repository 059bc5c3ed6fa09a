// Package rules is the policy attachment engine: Evaluate judges one policy write against a
// snapshot of the cluster and returns a Verdict (denials, warnings, and the denials an
// enforcement mode let through). It is pure: no HTTP, no client-go, no controller-runtime;
// every other object is read through topology.Snapshot, by key. TestPureBoundary keeps it so.
//
// The engine is a stack of small packages, each below the next:
//
//	kinds       what is known of each policy kind (a row of data, never a switch on a kind),
//	            and of each kind a policy may target
//	policy      a policy as judged: its target references, stanzas, strategies, references
//	topology    the GEP-713 hierarchy: objects, route attachment, ReferenceGrants, context
//	            paths, and the Snapshot interface the rest reads the cluster through
//	merge       the merge strategies folded along a context path, each setting with its source
//	validation  one file per stable reason; each check is a pure function of the policy and
//	            the snapshot returning field.ErrorList
//	rules       this package: Request, Verdict, Evaluate, and the Config of enforcement modes
//	impact      what an accepted policy does: impact, explain, deletion warnings, audit
//
// The doors sit outside: pkg/admission (HTTPS), pkg/check (`webhook check`, `explain`,
// `audit` on files), with pkg/index holding the snapshot and pkg/clusterstate feeding it
// from the API server. ARCHITECTURE.md draws the data path.
package rules
