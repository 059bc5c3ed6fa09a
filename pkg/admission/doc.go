// Package admission is the HTTPS door to the rules engine: it decodes an AdmissionReview
// once, picks the kind row, has pkg/clusterstate judge the write (a live read where the
// store may be behind, then rules.Evaluate), and renders the verdict as an
// AdmissionResponse: a 422 with one cause per field, warnings, or the JSON patch of the
// impact annotations. The deletion of a policy target (a Gateway, a ListenerSet, an
// xRoute) is reviewed at a door of its own (TargetGuard), whose webhook fails open. It holds
// no rule logic and no cluster state of its own; it also serves the metrics and the probes.
package admission
