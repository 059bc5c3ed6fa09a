// Package crdvalidation does, offline, what the API server does to a custom resource
// before any admission webhook sees it: strict decoding (unknown fields refused, as under
// kubectl's default --validate=strict), the CRD's structural defaults, its OpenAPI schema,
// its list-type invariants, its embedded ObjectMeta and its CEL rules
// (x-kubernetes-validations), with the apiextensions apiserver's own packages, in the order
// its custom resource handler and strategy run them.
//
// The offline doors (`webhook check`, `webhook explain`) call it on the documents whose
// CRD they were given (among the manifests, or read from the cluster), so that a policy
// the CRD refuses is reported as the API server would refuse it (422 Invalid, its field
// paths and messages) before the rules engine judges anything, and so that what the
// engine reads is the object as the API server would store it, defaults applied.
package crdvalidation
