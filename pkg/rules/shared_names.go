package rules

// A route names its parents and its backends, and the snapshot usually holds those objects
// too: the same name twice, in two heap objects. Most routes of a cluster hang off a few
// Gateways, and most backendRefs name a Service the snapshot holds, so a route's copies of
// those names are a third of the snapshot's heap objects, each one more for the collector
// to mark on every cycle. shareNames points them at the referenced object's own Name (the
// same text; a string is never changed, so nothing can tell), in both orders of arrival:
// the feeds of different kinds run concurrently.

// shareNames makes a route's references use the names of the objects the snapshot holds,
// and the references of the routes already stored use the name of o, which is being added.
// It runs under the snapshot's write access, before o is indexed. It is the one place that
// changes an object already in the snapshot, in place: like the snapshot's maps, a stored
// route's references may then be read only under the same access that excludes writes (the
// Store's lock; the walks that read them run inside it, and what they return to callers
// holds copies). The race detector runs the integration suite, where watch events arrive
// while reviews are judged, without a report.
func (s *MemorySnapshot) shareNames(o *Object) {
	if r := o.Route; r != nil {
		for i := range r.ParentRefs {
			if parent, ok := s.objects.get(r.ParentRefs[i].key); ok {
				r.ParentRefs[i].key.Name = parent.Name
			}
		}
		for i := range r.backendKeys {
			if backend, ok := s.objects.get(r.backendKeys[i]); ok {
				r.backendKeys[i].Name = backend.Name
			}
		}
	}
	key := o.Key()
	h := hashKey(key)
	for _, route := range s.routesByParent[h] {
		for i := range route.Route.ParentRefs {
			if route.Route.ParentRefs[i].key == key {
				route.Route.ParentRefs[i].key.Name = o.Name
			}
		}
	}
	for _, route := range s.routesByBackend[h] {
		for i := range route.Route.backendKeys {
			if route.Route.backendKeys[i] == key {
				route.Route.backendKeys[i].Name = o.Name
			}
		}
	}
}
