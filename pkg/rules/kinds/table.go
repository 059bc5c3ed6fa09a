package kinds

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

//go:embed builtin_kinds.yaml
var builtinKindsYAML []byte

// SourceBuiltin is the Source of the built-in rows (and of the rows derived from them and
// the CRD a cluster runs).
const SourceBuiltin = "builtin"

// PolicyLabel marks a CRD as a policy kind (GEP-713); its value is the class.
const PolicyLabel = "gateway.networking.k8s.io/policy"

// KindTable maps policy GroupKinds to their rows. It is built once and read concurrently.
type KindTable struct {
	rows            map[schema.GroupKind]*KindRow
	implementations implementationSet
}

// kindFile is the on-disk format of the table (the builtin file and --config files).
type kindFile struct {
	Implementations []Implementation `json:"implementations,omitempty"`
	Kinds           []KindRow        `json:"kinds"`
}

// NewKindTable returns an empty table.
func NewKindTable() *KindTable {
	return &KindTable{rows: map[schema.GroupKind]*KindRow{}, implementations: implementationSet{}}
}

// BuiltinKindTable returns a fresh table holding the built-in rows.
func BuiltinKindTable() *KindTable {
	t := NewKindTable()
	if err := t.Load(builtinKindsYAML, SourceBuiltin); err != nil {
		// The file is embedded and covered by tests; failing here is a build defect.
		panic(fmt.Sprintf("builtin kind table: %v", err))
	}
	return t
}

// Load parses a kind file and adds or replaces its implementations, then its rows.
func (t *KindTable) Load(data []byte, source string) error {
	var f kindFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if len(f.Kinds) == 0 {
		return fmt.Errorf("%s: no kinds listed under `kinds`", source)
	}
	if err := t.PutImplementations(f.Implementations, source); err != nil {
		return err
	}
	return t.Add(f.Kinds, source)
}

// Add validates rows and adds them all, or none if any is bad.
func (t *KindTable) Add(kinds []KindRow, source string) error {
	var errs []string
	for i := range kinds {
		r := &kinds[i]
		applyRowDefaults(r)
		r.Source = source
		if err := validateRow(r); err != nil {
			errs = append(errs, fmt.Sprintf("kinds[%d]: %v", i, err))
		} else if err := t.implementations.resolve(r); err != nil {
			errs = append(errs, fmt.Sprintf("kinds[%d]: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", source, strings.Join(errs, "; "))
	}
	for i := range kinds {
		r := kinds[i]
		t.rows[r.GroupKind()] = &r
	}
	return nil
}

// Put adds or replaces one row.
func (t *KindTable) Put(r KindRow) error {
	applyRowDefaults(&r)
	if err := validateRow(&r); err != nil {
		return err
	}
	if err := t.implementations.resolve(&r); err != nil {
		return err
	}
	t.rows[r.GroupKind()] = &r
	return nil
}

// Lookup returns the row for a policy kind.
func (t *KindTable) Lookup(gk schema.GroupKind) (*KindRow, bool) {
	r, ok := t.rows[gk]
	return r, ok
}

// Rows returns every row, ordered by group then kind.
func (t *KindTable) Rows() []*KindRow {
	out := make([]*KindRow, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
