// Package reports writes what is true now of each namespace's attached policies as
// OpenReports Report objects (openreports.io/v1alpha1, the successor of the policy working
// group's PolicyReport, read by Policy Reporter and Kyverno): one Report per namespace
// holding one result per policy (its current impact, with its ancestors and targets in
// GEP-5058's vocabulary), one per audit finding (a denial the rules would give it today),
// and, with the statuses the controllers wrote (BuildWith), one per disagreement between
// such a status and the prediction (rule prediction).
//
// Build and BuildWith are pure functions of a snapshot, the config and the statuses; Writer brings the cluster's
// Reports to what Build returned, writing only those that changed, at a bounded rate. A
// Report is read by whoever may read its namespace, so its text follows the tenant rules
// of admission: policies in other namespaces are described by kind and namespace, unless
// messages.revealOtherNamespaces says otherwise.
package reports
