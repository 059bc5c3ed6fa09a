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
// the four denials, against objects of the snapshot. Each review carries what the API server
// sends for a `kubectl apply`: the requesting user, the options, the object's server-set
// metadata, its managedFields and last-applied configuration, and on an update the old object.
func Reviews(s Size) []Review {
	color := func(ns, name string, spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
	}
	routeRef := func(r int) []any {
		return []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)}}
	}
	var mix []Review
	for i := 0; i < 40; i++ { // updates of stored route policies
		r := i * 3 * 2 % s.Routes
		ns := s.Namespace(r)
		obj := color(ns, fmt.Sprintf("p-%d", i*3), map[string]any{"targetRefs": routeRef(r), "colors": map[string]any{"light": "blue"}})
		path := "/validate"
		if i%2 == 1 {
			path = "/mutate"
		}
		mix = append(mix, Review{path, review("UPDATE", "ColorPolicy", "policies.controller.io", "v1", ns, fmt.Sprintf("p-%d", i*3), obj), true})
	}
	for i := 0; i < 10; i++ {
		ns := s.Namespace(i)
		mix = append(mix,
			Review{"/validate", review("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "bad-kind", color(ns, "bad-kind",
				map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "svc-1"}}, "color": "red"})), false},
			Review{"/validate", review("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "cross-ns", color(ns, "cross-ns",
				map[string]any{"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw-5", "namespace": "infra"}}, "color": "red"})), false},
			Review{"/validate", review("CREATE", "ColorPolicy", "policies.controller.io", "v1", ns, "two-ways", color(ns, "two-ways",
				map[string]any{"targetRefs": routeRef(i), "defaults": map[string]any{"color": "red"}, "overrides": map[string]any{"color": "red"}})), false},
		)
		r := (i*3 + 2) * 2 % s.Routes // a Service that already has a BackendTLSPolicy
		sns := s.Namespace(r)
		mix = append(mix, Review{"/validate", review("CREATE", "BackendTLSPolicy", "gateway.networking.k8s.io", "v1", sns, "second-tls", map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": map[string]any{"name": "second-tls", "namespace": sns},
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"}},
		}), false})
	}
	return mix
}

// review is the body of an AdmissionReview of obj, as the API server sends it.
func review(op, kind, group, version, ns, name string, obj map[string]any) []byte {
	applied, _ := json.Marshal(obj)
	obj = withServerMetadata(obj, string(applied))
	gvk := map[string]any{"group": group, "version": version, "kind": kind}
	gvr := map[string]any{"group": group, "version": version, "resource": strings.ToLower(kind) + "s"}
	options := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}
	request := map[string]any{
		"uid": "00000000-0000-0000-0000-000000000001", "operation": op, "namespace": ns, "name": name,
		"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
		"userInfo": map[string]any{"username": "kubernetes-admin", "groups": []any{"kubeadm:cluster-admins", "system:authenticated"}},
		"object":   obj, "dryRun": false, "options": options,
	}
	if op == "UPDATE" {
		options["kind"] = "UpdateOptions"
		old := withServerMetadata(obj, string(applied))
		old["metadata"].(map[string]any)["resourceVersion"] = "41"
		request["oldObject"] = old
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
	return body
}

// Creates are n CREATE reviews of new BackendTLSPolicies, each on a Service no policy
// targets yet (svc-1, svc-3, ...), all admitted: the write a GitOps controller sends when
// it applies new policies, each claiming its conflict key and, without claims, asking the
// API server whether another replica admitted a policy there.
func Creates(s Size, n int) []Review {
	out := make([]Review, n)
	for k := range out {
		r := (2*k + 1) % s.Routes
		ns, name := s.Namespace(r), fmt.Sprintf("load-create-%d", k)
		out[k] = Review{"/validate", review("CREATE", "BackendTLSPolicy", "gateway.networking.k8s.io", "v1", ns, name, map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"}},
		}), true}
	}
	return out
}

// withServerMetadata returns a copy of obj with the metadata the API server has set by the
// time it asks a webhook: uid, resourceVersion, generation, creationTimestamp, the
// last-applied configuration `kubectl apply` writes, and managedFields naming every field of
// the spec (a webhook that decodes them pays for them on every review).
func withServerMetadata(obj map[string]any, lastApplied string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	meta := map[string]any{}
	for k, v := range obj["metadata"].(map[string]any) {
		meta[k] = v
	}
	meta["uid"] = "6f1c2a9e-8d4b-4c1e-9a57-3b2e1f0d4c8a"
	meta["resourceVersion"] = "42"
	meta["generation"] = 1
	meta["creationTimestamp"] = "2026-11-01T09:30:00Z"
	meta["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": lastApplied + "\n"}
	meta["managedFields"] = []any{map[string]any{
		"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": obj["apiVersion"],
		"time": "2026-11-01T09:30:00Z", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{
			"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:kubectl.kubernetes.io/last-applied-configuration": map[string]any{}}},
			"f:spec":     fieldSet(obj["spec"]),
		},
	}}
	out["metadata"] = meta
	return out
}

// fieldSet is the FieldsV1 form of a value: every map key as "f:key", lists and scalars as
// leaves.
func fieldSet(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	out := map[string]any{".": map[string]any{}}
	for k, sub := range m {
		out["f:"+k] = fieldSet(sub)
	}
	return out
}
