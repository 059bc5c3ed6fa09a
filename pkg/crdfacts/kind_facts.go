package crdfacts

// KindFacts are the facts of every version a CRD serves: all that the comparison reads of
// it. They are read from a CRD (KindFactsOf), or kept as they are where the CRD itself may
// not be (test/kindsdrift's fact files, for implementations whose CRDs no Go module
// serves).
type KindFacts struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// PolicyLabel is the CRD's gateway.networking.k8s.io/policy label ("" when none).
	PolicyLabel string `json:"policyLabel,omitempty"`
	// Served lists the served versions in the CRD's order; Storage is the stored one.
	Served  []string `json:"served"`
	Storage string   `json:"storage"`
	// Versions holds the facts of each served version.
	Versions map[string]Facts `json:"versions"`
}

// KindFactsOf reads the facts of every version c serves.
func KindFactsOf(c *CRD) KindFacts {
	k := KindFacts{Group: c.Group, Kind: c.Kind, PolicyLabel: c.PolicyLabel, Served: c.Served, Storage: c.Storage, Versions: map[string]Facts{}}
	for _, v := range c.Served {
		k.Versions[v] = FactsOf(c, v)
	}
	return k
}

// At returns the facts of version v (empty facts of v where none were read).
func (k KindFacts) At(v string) Facts {
	f := k.Versions[v]
	f.Version = v
	return f
}

// Targetless says no served version has a target field: CRD.Targetless as far as the facts
// tell (they do not say whether spec keeps unknown fields, which would let a target through).
func (k KindFacts) Targetless() bool {
	for _, f := range k.Versions {
		if len(f.TargetRefFields) > 0 {
			return false
		}
	}
	return len(k.Versions) > 0
}
