package kinds

// A built-in row is read from one release of its implementation (ReadAt); the cluster may
// run another. Releases widen what a policy may target, so a row read at one release denies
// what the next accepts. Where a cluster runs a policy kind's CRD, the doors that read the
// cluster judge by a row derived from it (pkg/crdfacts.Derive): the built-in row, widened
// where the installed CRD admits more. Where the CRD is stricter, the row stays: the API
// server refuses first. The derived row remembers what it widened, so that a policy relying
// on a widened fact is admitted with a CRDDrift warning rather than denied.

// The facts a derived row widens to what the installed CRD admits.
const (
	// FactVersions: a version the CRD serves and the row does not list.
	FactVersions = "versions"
	// FactMaxTargetRefs: spec.targetRefs' maxItems, larger in the CRD or absent there.
	FactMaxTargetRefs = "maxTargetRefs"
	// FactTargetKinds: a target kind the CRD's enums and CEL rules admit.
	FactTargetKinds = "targetKinds"
	// FactFieldTargetKinds: the target kinds a policy that sets the row's strategy field may
	// have (Strategy.TargetKinds).
	FactFieldTargetKinds = "fieldTargetKinds"
	// FactReferenceKinds: a kind a reference field's enum or CEL rules admit.
	FactReferenceKinds = "referenceKinds"
)

// InstalledCRD is the CRD a cluster runs for a built-in policy kind, compared with its row.
type InstalledCRD struct {
	// Name is the CRD's name; Release the release it says it comes from (Gateway API's
	// bundle-version annotation, a Helm chart's labels), "" where it says none.
	Name    string
	Release string
	// Drift is every fact on which the built-in row and the CRD disagree.
	Drift []CRDDrift
	// Base is the built-in row, before the CRD widened it.
	Base *KindRow
}

// CRDDrift is one fact on which a built-in row and the installed CRD disagree.
type CRDDrift struct {
	// Fact is what disagrees (one of the Fact constants, or another fact the comparison
	// reads: targetRefFields, targetGroups, exclusiveFields, selectorsExclusive,
	// targetNamespace, reference); Item the version, kind, field or path it is about.
	Fact string `json:"fact"`
	Item string `json:"item,omitempty"`
	// Row and CRD say what each side holds.
	Row string `json:"row"`
	CRD string `json:"crd"`
	// Widened says the CRD admits more than the row here and the derived row follows it.
	Widened bool `json:"widened"`
}

// Widened lists the drift the derived row follows.
func (c *InstalledCRD) Widened() []CRDDrift {
	var out []CRDDrift
	for _, d := range c.Drift {
		if d.Widened {
			out = append(out, d)
		}
	}
	return out
}

// ReadAtPhrase says, for messages, which release the row was read at.
func (r *KindRow) ReadAtPhrase() string {
	if r.ReadAt == "" {
		return "built in"
	}
	return "read at " + r.ReadAt
}

// widenedTarget says t is a target the installed CRD added to a derived row: the CRD admits
// it, so the webhook takes it whether or not it knows the kind (an unknown kind is judged
// as a namespaced backend without sections, TargetInfoFor).
func (r *KindRow) widenedTarget(t TargetKind) bool {
	if r.Installed == nil {
		return false
	}
	_, inBase := r.Installed.Base.Target(t.Group, t.Kind)
	return !inBase
}

// KindDrift is one built-in policy kind whose CRD the cluster runs, compared with its row
// (`webhook kinds --cluster`, and the audit's kindDrift).
type KindDrift struct {
	// Kind is "group/Kind".
	Kind string `json:"kind"`
	// ReadAt is the release the row was read at ("" where the row says none).
	ReadAt string `json:"readAt,omitempty"`
	// CRD is the installed CRD's name; Release the release it says it comes from.
	CRD     string `json:"crd"`
	Release string `json:"release,omitempty"`
	// Drift is every difference, those the webhook judges by the CRD marked widened.
	Drift []CRDDrift `json:"drift"`
}

// DriftOf lists the kinds of table whose row was derived from an installed CRD, in table
// order; with widenedOnly, only the kinds and drift the webhook judges by the CRD.
func DriftOf(table *KindTable, widenedOnly bool) []KindDrift {
	var out []KindDrift
	for _, r := range table.Rows() {
		if r.Installed == nil {
			continue
		}
		drift := r.Installed.Drift
		if widenedOnly {
			drift = r.Installed.Widened()
			if len(drift) == 0 {
				continue
			}
		}
		out = append(out, KindDrift{Kind: r.Group + "/" + r.Kind, ReadAt: r.ReadAt, CRD: r.Installed.Name,
			Release: r.Installed.Release, Drift: append([]CRDDrift{}, drift...)})
	}
	return out
}

// String is the drift as a line: "targetKinds Service: row does not admit it; CRD admits
// it", with what the webhook does about it where it widened the row.
func (d CRDDrift) String() string {
	item := d.Fact
	if d.Item != "" {
		item += " " + d.Item
	}
	line := item + ": row " + d.Row + "; CRD " + d.CRD
	if d.Widened {
		line += " (judged by the CRD: CRDDrift warning)"
	}
	return line
}

// Heading says which CRD and row a KindDrift compares.
func (k KindDrift) Heading() string {
	release := "no release mark"
	if k.Release != "" {
		release = k.Release
	}
	readAt := "release not recorded"
	if k.ReadAt != "" {
		readAt = k.ReadAt
	}
	return k.Kind + ": row read at " + readAt + "; installed CRD " + k.CRD + " (" + release + ")"
}
