package impact

// Annotation keys written on accepted policies (DESIGN.md contract).
const (
	AnnotationImpact        = "policyattachment.io/impact"
	AnnotationImpactSummary = "policyattachment.io/impact-summary"
)
