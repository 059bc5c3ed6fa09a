package synthetic

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Review is one AdmissionReview of the load mix, with the verdict it must get.
type Review struct {
	Path    string
	Body    []byte
	Allowed bool
}

// Reviews builds the load mix: updates of existing policies (validate and mutate), and each of
// the four denials, against objects of the snapshot.
func Reviews() []Review {
	mk := func(op, kind, group, version, ns, name string, obj map[string]any) []byte {
		raw, _ := json.Marshal(obj)
		body, _ := json.Marshal(map[string]any{
			"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"request": map[string]any{
				"uid": "00000000-0000-0000-0000-000000000001", "operation": op, "namespace": ns, "name": name,
				"kind":     map[string]any{"group": group, "version": version, "kind": kind},
				"resource": map[string]any{"group": group, "version": version, "resource": strings.ToLower(kind) + "s"},
				"object":   json.RawMessage(raw),
			},
		})
		return body
	}
	color := func(ns, name string, spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
	}
	routeRef := func(r int) []any {
		return []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)}}
	}
	var mix []Review
	for i := 0; i < 40; i++ { // updates of stored route policies
		r := i * 3 * 2 % 10000
		ns := fmt.Sprintf("app-%d", r%100)
		obj := color(ns, fmt.Sprintf("p-%d", i*3), map[string]any{"targetRefs": routeRef(r), "colors": map[string]any{"light": "blue"}})
		path := "/validate"
		if i%2 == 1 {
			path = "/mutate"
		}
		mix = append(mix, Review{path, mk("UPDATE", "ColorPolicy", "policies.controller.io", "v1", ns, fmt.Sprintf("p-%d", i*3), obj), true})
	}
	for i := 0; i < 10; i++ {
		ns := fmt.Sprintf("app-%d", i)
		mix = append(mix,
			Review{"/validate", mk("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "bad-kind", color(ns, "bad-kind",
				map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "svc-1"}}, "color": "red"})), false},
			Review{"/validate", mk("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "cross-ns", color(ns, "cross-ns",
				map[string]any{"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw-5", "namespace": "infra"}}, "color": "red"})), false},
			Review{"/validate", mk("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "two-ways", color(ns, "two-ways",
				map[string]any{"targetRefs": routeRef(i), "defaults": map[string]any{"color": "red"}, "overrides": map[string]any{"color": "red"}})), false},
		)
		r := (i*3 + 2) * 2 % 10000 // a Service that already has a BackendTLSPolicy
		sns := fmt.Sprintf("app-%d", r%100)
		mix = append(mix, Review{"/validate", mk("CREATE", "BackendTLSPolicy", "gateway.networking.k8s.io", "v1", sns, "second-tls", map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": map[string]any{"name": "second-tls", "namespace": sns},
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"}},
		}), false})
	}
	return mix
}
