package clusterstate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// ReadAround reads what the context paths through one attachment point need, and not the
// rest of the cluster: the target, the objects on its paths (reached by following its
// references, each read by name; for a ListenerSet on them, the other ListenerSets of its
// Gateway, listed), and every policy, ReferenceGrant and Namespace (a policy may attach from
// any namespace, or by labels). The paths through a Gateway, a ListenerSet
// or a backend start at routes that name it, which no API server index finds: those route
// kinds are listed, and only the routes that name it are kept. A target of another role (a
// GatewayClass, a Namespace) reaches any Gateway, so the whole cluster is read. Progress is
// shown as ReadCluster shows it.
func ReadAround(ctx context.Context, cfg *rest.Config, table *kinds.KindTable, target policy.TargetKey, progress io.Writer) ([]manifests.Document, error) {
	info, _ := kinds.TargetInfoFor(schema.GroupKind{Group: target.Group, Kind: target.Kind})
	switch info.Role {
	case kinds.RoleRoute, kinds.RoleGateway, kinds.RoleListenerSet, kinds.RoleBackend:
	default:
		return ReadCluster(ctx, cfg, table, progress)
	}
	r, err := newReader(cfg, progress)
	if err != nil {
		return nil, err
	}
	if err := r.discoverPolicyKinds(ctx, table); err != nil {
		return nil, err
	}
	// GatewayClasses too: which controller serves each Gateway's class decides whether a
	// policy kind takes effect through it (there are a few in any cluster).
	whole := []schema.GroupKind{kinds.ReferenceGrant, {Kind: "Namespace"}, {Group: kinds.GatewayGroup, Kind: "GatewayClass"}}
	for _, row := range table.Rows() {
		whole = append(whole, row.GroupKind())
	}
	for _, gk := range whole {
		if err := r.list(ctx, gk, nil); err != nil {
			return nil, err
		}
	}
	key := target.Object()
	root, err := r.get(ctx, key)
	if err != nil {
		return nil, err
	}
	if root == nil && info.Role != kinds.RoleBackend {
		// No such object, no paths (a backend a route names has paths without existing).
		r.report()
		return r.docs, nil
	}
	var routes []*topology.Object
	switch info.Role {
	case kinds.RoleRoute:
		routes = []*topology.Object{root}
	case kinds.RoleListenerSet:
		if _, err := r.parentGateway(ctx, root); err != nil {
			return nil, err
		}
		routes, err = r.routesNaming(ctx, func(rt *topology.Object) bool { return hasParent(rt, key) })
	case kinds.RoleGateway:
		var sets []policy.TargetKey
		err = r.listAll(ctx, kinds.RoleListenerSet, func(o *topology.Object) bool {
			if o.Gateway != nil && o.Gateway.Parent != nil && *o.Gateway.Parent == key {
				sets = append(sets, o.Key())
				return true
			}
			return false
		})
		if err == nil {
			routes, err = r.routesNaming(ctx, func(rt *topology.Object) bool {
				return hasParent(rt, key) || slices.ContainsFunc(sets, func(k policy.TargetKey) bool { return hasParent(rt, k) })
			})
		}
	case kinds.RoleBackend:
		routes, err = r.routesNaming(ctx, func(rt *topology.Object) bool {
			for b := range rt.Route.AllBackends() {
				if b.Key() == key {
					return true
				}
			}
			return false
		})
	}
	if err != nil {
		return nil, err
	}
	for _, rt := range routes {
		if err := r.around(ctx, rt, info.Role); err != nil {
			return nil, err
		}
	}
	if info.Role != kinds.RoleGateway { // a Gateway's ListenerSets are all read already
		if err := r.siblingSets(ctx); err != nil {
			return nil, err
		}
	}
	r.report()
	return r.docs, nil
}

// siblingSets reads the other ListenerSets of the Gateways of the ListenerSets read so far:
// a ListenerSet's listener carries routes only when no listener of an older ListenerSet of
// its Gateway conflicts with it (topology.LostListener).
func (r *reader) siblingSets(ctx context.Context) error {
	gateways := map[policy.TargetKey]bool{}
	for _, o := range r.seen {
		if o != nil && o.Gateway != nil && o.Gateway.Parent != nil {
			gateways[*o.Gateway.Parent] = true
		}
	}
	if len(gateways) == 0 {
		return nil
	}
	return r.listAll(ctx, kinds.RoleListenerSet, func(o *topology.Object) bool {
		_, read := r.seen[o.Key()]
		return !read && o.Gateway != nil && o.Gateway.Parent != nil && gateways[*o.Gateway.Parent]
	})
}

// around reads a route's parents (a ListenerSet's Gateway too) and backends, those the
// target's role did not already read.
func (r *reader) around(ctx context.Context, rt *topology.Object, role kinds.Role) error {
	if rt.Route == nil {
		return nil
	}
	if role == kinds.RoleRoute || role == kinds.RoleBackend {
		for p := range rt.Route.ParentRefs() {
			parent, err := r.get(ctx, p.Key())
			if err != nil {
				return err
			}
			if _, err := r.parentGateway(ctx, parent); err != nil {
				return err
			}
		}
	}
	if role != kinds.RoleBackend {
		for b := range rt.Route.AllBackends() {
			if _, err := r.get(ctx, b.Key()); err != nil {
				return err
			}
		}
	}
	return nil
}

// parentGateway reads a ListenerSet's Gateway.
func (r *reader) parentGateway(ctx context.Context, o *topology.Object) (*topology.Object, error) {
	if o == nil || o.Gateway == nil || o.Gateway.Parent == nil {
		return nil, nil
	}
	return r.get(ctx, *o.Gateway.Parent)
}

func hasParent(rt *topology.Object, key policy.TargetKey) bool {
	if rt.Route == nil {
		return false
	}
	for p := range rt.Route.ParentRefs() {
		if p.Key() == key {
			return true
		}
	}
	return false
}

// routesNaming lists every watched route kind and keeps the routes keep accepts.
func (r *reader) routesNaming(ctx context.Context, keep func(*topology.Object) bool) ([]*topology.Object, error) {
	var routes []*topology.Object
	err := r.listAll(ctx, kinds.RoleRoute, func(o *topology.Object) bool {
		if o.Route != nil && keep(o) {
			routes = append(routes, o)
			return true
		}
		return false
	})
	return routes, err
}

// listAll lists every watched kind of a role, keeping the objects keep accepts.
func (r *reader) listAll(ctx context.Context, role kinds.Role, keep func(*topology.Object) bool) error {
	for _, t := range kinds.TargetKinds() {
		if t.Role == role && t.Watched {
			if err := r.list(ctx, t.GroupKind(), keep); err != nil {
				return err
			}
		}
	}
	return nil
}

// reader reads objects into documents, counting them by resource for the progress it shows.
type reader struct {
	c        client.Client
	progress io.Writer
	docs     []manifests.Document
	// sink, when set, takes the documents a page at a time instead of docs keeping them.
	sink func([]manifests.Document) error
	seen map[policy.TargetKey]*topology.Object
	// count numbers the documents of each resource; byName counts those read one by one.
	count  map[schema.GroupResource]int
	byName map[schema.GroupResource]int
}

func newReader(cfg *rest.Config, progress io.Writer) (*reader, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	if p, ok := progress.(*Progress); ok {
		p.begin()
	}
	return &reader{c: c, progress: progress, seen: map[policy.TargetKey]*topology.Object{},
		count: map[schema.GroupResource]int{}, byName: map[schema.GroupResource]int{}}, nil
}

// discoverPolicyKinds adds a row to table for each CRD labelled as a policy kind, and
// replaces each built-in row whose CRD the cluster runs with the row derived from it.
func (r *reader) discoverPolicyKinds(ctx context.Context, table *kinds.KindTable) error {
	if err := deriveRows(ctx, r.c, r.c.RESTMapper(), table); err != nil {
		return err
	}
	crds, err := listAll(ctx, r.c, crdGVK, client.HasLabels{kinds.PolicyLabel})
	if err != nil {
		return fmt.Errorf("listing policy CRDs: %w", err)
	}
	for i := range crds {
		found, labelled, err := kinds.RowFromCRD(crds[i].Object)
		if !labelled || (err == nil && found.Targetless) {
			continue // not a policy kind, or one whose objects name no target: nothing to judge
		}
		if err == nil {
			if _, known := table.Lookup(found.Row.GroupKind()); !known {
				err = table.Put(found.Row)
			}
		}
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crds[i].GetName(), err)
		}
	}
	return nil
}

// list reads every object of a kind the cluster serves; with keep, only the target objects
// it accepts are kept.
func (r *reader) list(ctx context.Context, gk schema.GroupKind, keep func(*topology.Object) bool) error {
	mapping, err := r.c.RESTMapper().RESTMapping(gk)
	if err != nil {
		return nil // not served by this cluster
	}
	gr := mapping.Resource.GroupResource()
	listed, kept := 0, 0
	err = eachItem(ctx, r.c, mapping.GroupVersionKind, func(item *unstructured.Unstructured) error {
		listed++
		if keep != nil {
			o := topology.NewObject(gk.Group, gk.Kind, item.Object)
			if !keep(o) {
				return nil
			}
			r.seen[o.Key()] = o
		}
		r.add(gr, item.Object)
		kept++
		return r.flush(false)
	})
	if err == nil {
		err = r.flush(true)
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", gr, err)
	}
	if keep == nil {
		r.step(readStep{resource: gr, objects: kept, how: readListed})
	} else {
		r.step(readStep{resource: gr, objects: kept, listed: listed, how: readFiltered})
	}
	return nil
}

// flush hands the documents read so far to the sink, if there is one, once a page's worth
// has gathered (or at the end of a kind, when all is set), and drops them.
func (r *reader) flush(all bool) error {
	if r.sink == nil || len(r.docs) == 0 || (!all && len(r.docs) < ListPageSize) {
		return nil
	}
	err := r.sink(r.docs)
	r.docs = nil
	return err
}

// get reads one target object by name, once: nil when it does not exist, or when its kind
// is not one the rules read from a cluster (as ReadCluster would not have it either).
func (r *reader) get(ctx context.Context, key policy.TargetKey) (*topology.Object, error) {
	if o, ok := r.seen[key]; ok {
		return o, nil
	}
	r.seen[key] = nil
	gk := schema.GroupKind{Group: key.Group, Kind: key.Kind}
	if !slices.Contains(kinds.ReadKinds(), gk) {
		return nil, nil
	}
	mapping, err := r.c.RESTMapper().RESTMapping(gk)
	if err != nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, u); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", mapping.Resource.GroupResource(), key, err)
	}
	gr := mapping.Resource.GroupResource()
	r.byName[gr]++
	r.step(readStep{resource: gr, objects: 1, how: readOneByName})
	r.add(gr, u.Object)
	o := topology.NewObject(key.Group, key.Kind, u.Object)
	r.seen[key] = o
	return o, nil
}

func (r *reader) add(gr schema.GroupResource, obj map[string]any) {
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	r.count[gr]++
	r.docs = append(r.docs, manifests.Document{Source: "cluster " + gr.String(), Index: r.count[gr], Object: obj})
}

// report prints how many objects of each resource were read by name.
func (r *reader) report() {
	for _, gr := range slices.SortedFunc(maps.Keys(r.byName), func(a, b schema.GroupResource) int {
		return strings.Compare(a.String(), b.String())
	}) {
		r.step(readStep{resource: gr, objects: r.byName[gr], how: readByNameTotal})
	}
}

// step tells a Progress of one step of the read, or writes its -v line to any other writer.
func (r *reader) step(s readStep) {
	if p, ok := r.progress.(*Progress); ok {
		p.step(s)
	} else if s.how != readOneByName {
		fmt.Fprintln(r.progress, s)
	}
}
