package clusterstate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// The installed CRD is the runtime truth: each built-in row was read at one release of its
// implementation, and the cluster may run a later one that admits more. Every door that
// reads a cluster (serve's feeds, ReadCluster, EachClusterPage, ReadAround) judges a
// built-in kind whose CRD the cluster runs by the row derived from that CRD
// (crdfacts.Derive): the built-in row, widened where the CRD admits more.

// readCRD reads the CustomResourceDefinition of a kind the cluster serves, by its name
// (plural.group): nil when the cluster does not serve the kind, or serves it itself or
// through an aggregated API. One GET, where listing every CRD would read megabytes.
func readCRD(ctx context.Context, c client.Reader, mapper meta.RESTMapper, gk schema.GroupKind) (*unstructured.Unstructured, error) {
	if gk.Group == "" {
		return nil, nil
	}
	mapping, err := mapper.RESTMapping(gk)
	if err != nil {
		return nil, nil // not served here
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	name := mapping.Resource.Resource + "." + gk.Group
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading the CustomResourceDefinition %s: %w", name, err)
	}
	return crd, nil
}

// deriveRow returns the row to judge a built-in kind by on this cluster, and the CRD it was
// derived from: the row derived from the installed CRD; the row as built in where the
// cluster runs no CRD for the kind (crd nil; the built-in row again if the CRD is gone); the
// row as it is where the kind is not built in (a --config row says what its author wants; a
// discovered row is its CRD's already).
func deriveRow(ctx context.Context, c client.Reader, mapper meta.RESTMapper, row *kinds.KindRow) (derived kinds.KindRow, crd *unstructured.Unstructured, err error) {
	if row.Source != kinds.SourceBuiltin {
		return *row, nil, nil
	}
	if crd, err = readCRD(ctx, c, mapper, row.GroupKind()); err != nil || crd == nil {
		if row.Installed != nil {
			return *row.Installed.Base, nil, err
		}
		return *row, nil, err
	}
	return crdfacts.Derive(row, crdfacts.FromObject(crd.Object)), crd, nil
}

// deriveRows puts into table, for every built-in kind whose CRD the cluster runs, the row
// derived from that CRD.
func deriveRows(ctx context.Context, c client.Reader, mapper meta.RESTMapper, table *kinds.KindTable) error {
	for _, row := range table.Rows() {
		derived, crd, err := deriveRow(ctx, c, mapper, row)
		if err != nil {
			return err
		}
		if crd == nil {
			continue
		}
		if err := table.Put(derived); err != nil {
			return fmt.Errorf("the row of %s derived from its installed CRD: %w", kinds.QualifiedKind(row.Group, row.Kind), err)
		}
	}
	return nil
}

// useInstalledCRD has the store judge a built-in kind by the row derived from the CRD the
// cluster runs now (or by the built-in row, where it runs none), and reports the drift: a
// log line and the policyattachment_kind_drift gauge. A CRD that cannot be read leaves the
// row as it was, with an error logged: a row stricter than the cluster's release must not
// take validation down.
func (s *Feeds) useInstalledCRD(ctx context.Context, gk schema.GroupKind) {
	row, ok := s.store.Row(gk)
	if !ok || row.Source != kinds.SourceBuiltin {
		return
	}
	derived, crd, err := deriveRow(ctx, s.mgr.GetAPIReader(), s.mgr.GetRESTMapper(), row)
	if err != nil {
		s.log.Error(err, "reading the installed CRD of a built-in policy kind; judging it by the built-in row", "kind", gk.String())
	}
	s.mu.Lock()
	if crd != nil {
		s.derivedAt[gk] = crd.GetGeneration()
	} else {
		delete(s.derivedAt, gk)
	}
	s.mu.Unlock()
	if crd == nil && row.Installed == nil {
		return
	}
	if err := s.store.UseRow(derived); err != nil {
		s.log.Error(err, "the row derived from the installed CRD is unusable; judging by the built-in row", "kind", gk.String())
		return
	}
	recordDrift(&derived)
	if derived.Installed == nil {
		return
	}
	var widened []string
	for _, d := range derived.Installed.Widened() {
		widened = append(widened, fmt.Sprintf("%s %s: row %s; CRD %s", d.Fact, d.Item, d.Row, d.CRD))
	}
	if len(widened) > 0 {
		s.log.Info("the installed CRD admits more than the built-in row: judging by the CRD, with CRDDrift warnings",
			"kind", gk.String(), "crd", derived.Installed.Name, "release", derived.Installed.Release, "rowReadAt", derived.ReadAt, "widened", widened)
	}
}

// crdChanged reports whether a CRD event is about a built-in kind whose installed CRD has
// changed since its row was derived (its spec: metadata.generation), or was deleted.
func (s *Feeds) crdChanged(u *unstructured.Unstructured, deleted bool) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	gk := schema.GroupKind{Group: group, Kind: kind}
	if row, ok := s.store.Row(gk); !ok || row.Source != kinds.SourceBuiltin {
		return gk, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, derived := s.derivedAt[gk]
	return gk, deleted || !derived || at != u.GetGeneration()
}

// UseInstalledCRDs replaces, in table, each built-in row whose kind's CRD the cluster runs
// with the row derived from that CRD (`webhook kinds --cluster`; the cluster reads do it as
// they discover policy kinds).
func UseInstalledCRDs(ctx context.Context, cfg *rest.Config, table *kinds.KindTable) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("connecting to the API server: %w", err)
	}
	return deriveRows(ctx, c, c.RESTMapper(), table)
}
