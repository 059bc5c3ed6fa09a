package clusterstate

import (
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// ListPageSize bounds each List: a large cluster is read in pages, not one response
// (`webhook audit` reading a cluster, and the first list of each kind `webhook serve` watches).
const ListPageSize = 500

// ReadCluster lists, from the API server, every object the rules read: the non-policy
// kinds, the table's policy kinds and CRDs labelled as policies (whose discovered rows are
// added to table). Kinds the cluster does not serve are skipped. Progress goes to progress.
func ReadCluster(ctx context.Context, cfg *rest.Config, table *kinds.KindTable, progress io.Writer) ([]manifests.Document, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	crds, err := listAll(ctx, c, crdGVK, client.HasLabels{kinds.PolicyLabel})
	if err != nil {
		return nil, fmt.Errorf("listing policy CRDs: %w", err)
	}
	for i := range crds {
		found, labelled, err := kinds.RowFromCRD(crds[i].Object)
		if !labelled {
			continue
		}
		if err == nil {
			if _, known := table.Lookup(found.Row.GroupKind()); !known {
				err = table.Put(found.Row)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("CRD %s: %w", crds[i].GetName(), err)
		}
	}
	gks := kinds.ReadKinds()
	for _, row := range table.Rows() {
		gks = append(gks, row.GroupKind())
	}
	var docs []manifests.Document
	for _, gk := range gks {
		mapping, err := c.RESTMapper().RESTMapping(gk)
		if err != nil {
			continue // not served by this cluster
		}
		items, err := listAll(ctx, c, mapping.GroupVersionKind)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", mapping.Resource.GroupResource(), err)
		}
		fmt.Fprintf(progress, "read %d %s\n", len(items), mapping.Resource.GroupResource())
		for i := range items {
			obj := items[i].Object
			delete(obj, "status")
			if meta, ok := obj["metadata"].(map[string]any); ok {
				delete(meta, "managedFields")
			}
			docs = append(docs, manifests.Document{Source: "cluster " + mapping.Resource.GroupResource().String(), Index: i + 1, Object: obj})
		}
	}
	return docs, nil
}

// listAll lists every object of gvk, page by page, with client-go's pager: when a long read
// outlives its continue token (410 Gone), it lists the rest again in one request instead of
// failing.
func listAll(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]unstructured.Unstructured, error) {
	p := pager.New(func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		listOpts := (&client.ListOptions{}).ApplyOptions(opts)
		listOpts.Limit, listOpts.Continue = raw.Limit, raw.Continue
		return list, c.List(ctx, list, listOpts)
	})
	p.PageSize = ListPageSize
	var out []unstructured.Unstructured
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		out = append(out, *obj.(*unstructured.Unstructured))
		return nil
	})
	return out, err
}
