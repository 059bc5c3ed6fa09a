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

// ListPageSize bounds each List: a large cluster is read in pages, not one response
// (`webhook audit` reading a cluster, and the first list of each kind `webhook serve` watches).
const ListPageSize = 500

// ReadCluster lists, from the API server, every object the rules read: the non-policy
// kinds, the table's policy kinds and CRDs labelled as policies (whose discovered rows are
// added to table). Kinds the cluster does not serve are skipped. Progress goes to progress.
func ReadCluster(ctx context.Context, cfg *rest.Config, table *kinds.KindTable, progress io.Writer) ([]manifests.Document, error) {
	r, err := newReader(cfg, progress)
	if err != nil {
		return nil, err
	}
	if err := r.discoverPolicyKinds(ctx, table); err != nil {
		return nil, err
	}
	gks := kinds.ReadKinds()
	for _, row := range table.Rows() {
		gks = append(gks, row.GroupKind())
	}
	for _, gk := range gks {
		if err := r.list(ctx, gk, nil); err != nil {
			return nil, err
		}
	}
	return r.docs, nil
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
