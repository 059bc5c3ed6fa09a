package synthetic

import (
	"encoding/json"
	"fmt"
	"os"
)

// PictureNamespaces are the application namespaces of Picture's cluster; routes are dealt
// to them in turn.
var PictureNamespaces = []string{"shop", "blog", "api", "admin"}

// Picture is a cluster the size a platform team draws (`explain -o html` and its
// screenshots): routes HTTPRoutes over two Gateways of one Envoy Gateway class (a public
// one with http and https listeners, and an internal one that every fifth route also
// attaches to), one rule and one Service each; policies at every level: a
// Gateway-wide ColorPolicy (defaults), a listener ColorPolicy (overrides), a ColorPolicy on
// every seventh route, a BackendTrafficPolicy on the public Gateway and one that selects
// every route of namespace shop by label (a selector policy on a quarter of the routes),
// and a BackendTLSPolicy on every tenth Service.
func Picture(routes int, emit func(map[string]any) error) error {
	gw := func(name string) map[string]any {
		return map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": name}
	}
	route := func(ns, name string) map[string]any {
		return map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": name, "namespace": ns}
	}
	listener := func(name string) map[string]any {
		return map[string]any{"name": name, "protocol": "HTTP", "port": map[string]int{"http": 80, "https": 8443}[name],
			"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}
	}
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "infra"}},
		{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": map[string]any{"name": "eg"},
			"spec": map[string]any{"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"}},
		{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": map[string]any{"name": "public", "namespace": "infra"},
			"spec": map[string]any{"gatewayClassName": "eg", "listeners": []any{listener("http"), listener("https")}}},
		{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": map[string]any{"name": "internal", "namespace": "infra"},
			"spec": map[string]any{"gatewayClassName": "eg", "listeners": []any{listener("http")}}},
	}
	for _, ns := range PictureNamespaces {
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	}
	for r := 0; r < routes; r++ {
		ns := PictureNamespaces[r%len(PictureNamespaces)]
		parents := []any{map[string]any{"name": "public", "namespace": "infra"}}
		if r%5 == 0 {
			parents = append(parents, map[string]any{"name": "internal", "namespace": "infra"})
		}
		svc := fmt.Sprintf("svc-%d", r)
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": svc, "namespace": ns},
			"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443}}}})
		objs = append(objs, map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
			"metadata": map[string]any{"name": fmt.Sprintf("route-%d", r), "namespace": ns, "labels": map[string]any{"tier": "web"}},
			"spec": map[string]any{"parentRefs": parents, "rules": []any{map[string]any{"name": "main",
				"backendRefs": []any{map[string]any{"name": svc, "port": 443}}}}}})
		if r%7 == 3 {
			objs = append(objs, map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy",
				"metadata": map[string]any{"name": fmt.Sprintf("route-%d-color", r), "namespace": ns},
				"spec":     map[string]any{"targetRefs": []any{route(ns, fmt.Sprintf("route-%d", r))}, "defaults": map[string]any{"color": "green"}}})
		}
		if r%10 == 0 {
			objs = append(objs, map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
				"metadata": map[string]any{"name": svc + "-tls", "namespace": ns},
				"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": svc, "sectionName": "https"}},
					"validation": map[string]any{"hostname": svc + ".example", "wellKnownCACertificates": "System"}}})
		}
	}
	objs = append(objs,
		map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": map[string]any{"name": "gateway-wide", "namespace": "infra"},
			"spec": map[string]any{"targetRefs": []any{gw("public"), gw("internal")}, "defaults": map[string]any{"color": "blue", "shade": "light"}}},
		map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": map[string]any{"name": "https-only", "namespace": "infra"},
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "public", "sectionName": "https"}},
				"overrides": map[string]any{"color": "red"}}},
		map[string]any{"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy", "metadata": map[string]any{"name": "public-timeouts", "namespace": "infra"},
			"spec": map[string]any{"targetRefs": []any{gw("public")}, "timeout": map[string]any{"http": map[string]any{"requestTimeout": "10s"}}}},
		map[string]any{"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy", "metadata": map[string]any{"name": "shop-web", "namespace": "shop"},
			"spec": map[string]any{"targetSelectors": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "matchLabels": map[string]any{"tier": "web"}}},
				"timeout": map[string]any{"http": map[string]any{"requestTimeout": "3s"}}}},
	)
	for _, o := range objs {
		if err := emit(o); err != nil {
			return err
		}
	}
	return nil
}

// WritePicture writes Picture's cluster to one file of JSON documents.
func WritePicture(path string, routes int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	if err := Picture(routes, func(obj map[string]any) error { return enc.Encode(obj) }); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
