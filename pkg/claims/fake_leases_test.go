package claims

import (
	"context"
	"strconv"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// fakeLeases is the Lease API as claims use it, in memory, with the API server's
// resourceVersion and precondition checks. beforeCreate, when set, runs before each create.
type fakeLeases struct {
	coordinationclient.LeaseInterface // what claims never call panics

	mu           sync.Mutex
	items        map[string]*coordinationv1.Lease
	version      int
	beforeCreate func()
}

func newFakeLeases(existing ...*coordinationv1.Lease) *fakeLeases {
	f := &fakeLeases{items: map[string]*coordinationv1.Lease{}}
	for _, l := range existing {
		f.put(l.DeepCopy())
	}
	return f
}

// put stores l with the next resourceVersion; f.mu is held or not needed.
func (f *fakeLeases) put(l *coordinationv1.Lease) *coordinationv1.Lease {
	f.version++
	l.ResourceVersion = strconv.Itoa(f.version)
	if l.UID == "" {
		l.UID = types.UID("uid-" + l.Name + "-" + l.ResourceVersion)
	}
	f.items[l.Name] = l
	return l.DeepCopy()
}

// Create creates l as the API server does: to its end, even when ctx ends first (the
// client then returns ctx's error without the answer).
func (f *fakeLeases) Create(ctx context.Context, l *coordinationv1.Lease, _ metav1.CreateOptions) (*coordinationv1.Lease, error) {
	type result struct {
		lease *coordinationv1.Lease
		err   error
	}
	done := make(chan result, 1)
	l = l.DeepCopy()
	go func() {
		if f.beforeCreate != nil {
			f.beforeCreate()
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.items[l.Name]; ok {
			done <- result{err: apierrors.NewAlreadyExists(leaseResource, l.Name)}
			return
		}
		l.UID = ""
		done <- result{lease: f.put(l)}
	}()
	select {
	case r := <-done:
		return r.lease, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeLeases) Get(_ context.Context, name string, _ metav1.GetOptions) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.items[name]
	if !ok {
		return nil, apierrors.NewNotFound(leaseResource, name)
	}
	return l.DeepCopy(), nil
}

func (f *fakeLeases) Update(_ context.Context, l *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	current, ok := f.items[l.Name]
	if !ok {
		return nil, apierrors.NewNotFound(leaseResource, l.Name)
	}
	if l.ResourceVersion != current.ResourceVersion {
		return nil, apierrors.NewConflict(leaseResource, l.Name, nil)
	}
	l = l.DeepCopy()
	l.UID = current.UID
	return f.put(l), nil
}

func (f *fakeLeases) Delete(_ context.Context, name string, opts metav1.DeleteOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	current, ok := f.items[name]
	if !ok {
		return apierrors.NewNotFound(leaseResource, name)
	}
	if p := opts.Preconditions; p != nil && ((p.UID != nil && *p.UID != current.UID) || (p.ResourceVersion != nil && *p.ResourceVersion != current.ResourceVersion)) {
		return apierrors.NewConflict(leaseResource, name, nil)
	}
	delete(f.items, name)
	return nil
}

func (f *fakeLeases) List(_ context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	selector, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &coordinationv1.LeaseList{}
	for _, l := range f.items {
		if selector.Matches(labels.Set(l.Labels)) {
			out.Items = append(out.Items, *l.DeepCopy())
		}
	}
	return out, nil
}

// names are the Leases stored, each with its holder ("" when released) and its admissions.
func (f *fakeLeases) state() map[string]leaseState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]leaseState{}
	for name, l := range f.items {
		s := leaseState{Admitted: l.Annotations[AnnotationAdmitted]}
		if l.Spec.HolderIdentity != nil {
			s.Holder = *l.Spec.HolderIdentity
		}
		out[name] = s
	}
	return out
}

type leaseState struct{ Holder, Admitted string }
