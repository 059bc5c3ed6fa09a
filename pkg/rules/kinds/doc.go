// Package kinds is the kind table: one row of data per policy kind (its targets, target
// fields, stanzas, strategies, references), loaded from the built-in file, a --config file
// or a CRD's gateway.networking.k8s.io/policy label, and checked at load so a typo fails
// loudly. It also holds, in one place, what is known of every kind a policy may target: its
// scope, its role and level in the GEP-713 hierarchy, where its sections live, and where a
// kind's context paths end (effective targets). Nothing above this package switches on a
// kind's name.
//
// It imports only API machinery and YAML.
package kinds
