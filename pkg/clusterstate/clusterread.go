package clusterstate

import (
	"context"
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

// ListPageSize bounds each List the offline tools send (`webhook audit` and `explain`
// reading a cluster): a large cluster is read in pages, not one response.
const ListPageSize = 500

// ReadCluster lists, from the API server, every object the rules read: the non-policy
// kinds, the table's policy kinds and CRDs labelled as policies (whose discovered rows are
// added to table). Kinds the cluster does not serve are skipped. A *Progress as progress
// shows the read in its mode; any other writer gets a line per resource read.
func ReadCluster(ctx context.Context, cfg *rest.Config, table *kinds.KindTable, progress io.Writer) ([]manifests.Document, error) {
	var docs []manifests.Document
	err := EachClusterPage(ctx, cfg, table, progress, func(page []manifests.Document) error {
		docs = append(docs, page...)
		return nil
	})
	return docs, err
}

// EachClusterPage reads what ReadCluster reads, in the same order, and hands it to fn a page
// (at most ListPageSize documents) at a time, keeping none: a caller that builds a snapshot
// page by page holds one page of generic JSON at once, not the whole cluster's (a route with
// ten rules is about 10 KB of it). Rows of discovered policy kinds are in table before fn is
// first called.
func EachClusterPage(ctx context.Context, cfg *rest.Config, table *kinds.KindTable, progress io.Writer, fn func([]manifests.Document) error) error {
	r, err := newReader(cfg, progress)
	if err != nil {
		return err
	}
	r.sink = fn
	if err := r.discoverPolicyKinds(ctx, table); err != nil {
		return err
	}
	gks := kinds.ReadKinds()
	for _, row := range table.Rows() {
		gks = append(gks, row.GroupKind())
	}
	for _, gk := range gks {
		if err := r.list(ctx, gk, nil); err != nil {
			return err
		}
	}
	return nil
}

// listAll lists every object of gvk (eachItem).
func listAll(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	err := eachItem(ctx, c, gvk, func(item *unstructured.Unstructured) error {
		out = append(out, *item)
		return nil
	}, opts...)
	return out, err
}

// eachItem lists every object of gvk, page by page, with client-go's pager, and hands each
// to fn as its page arrives: when a long read outlives its continue token (410 Gone), it
// lists the rest again in one request instead of failing.
func eachItem(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, fn func(*unstructured.Unstructured) error, opts ...client.ListOption) error {
	p := pager.New(func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		listOpts := (&client.ListOptions{}).ApplyOptions(opts)
		listOpts.Limit, listOpts.Continue = raw.Limit, raw.Continue
		return list, c.List(ctx, list, listOpts)
	})
	p.PageSize = ListPageSize
	return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		return fn(obj.(*unstructured.Unstructured))
	})
}
