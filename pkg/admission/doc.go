// Package admission is the HTTPS door to the rules engine: it decodes an AdmissionReview
// once, picks the kind row, has pkg/clusterstate judge the write (a live read where the
// store may be behind, then rules.Evaluate), and renders the verdict as an
// AdmissionResponse: a 422 with one cause per field, warnings, or the JSON patch of the
// impact annotations. It holds no rule logic and no cluster state of its own; it also
// serves the metrics and the probes.
package admission
