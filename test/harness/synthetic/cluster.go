// Package synthetic generates the cluster the performance work measures against: at scale 1,
// 1,000 Gateways, 10,000 HTTPRoutes with 10 named rules each (one backend per rule) in 100
// namespaces, 10,000 Services and 5,000 policies (ColorPolicy, RateLimitPolicy,
// BackendTLSPolicy on routes and Services). Scale N multiplies every count, namespaces
// included, so a Gateway, a namespace and a route see the same neighbourhood at any scale:
// Gateway gw-g carries routes 10g to 10g+9 (each with its Service), and policy p-i attaches
// to route (or Service) 2i.
// The load harness and the benchmarks use the same objects.
package synthetic

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Size is how many objects of each kind the synthetic cluster holds.
type Size struct {
	Gateways, Routes, Policies, Namespaces int
}

// At is the cluster at scale n (n ≥ 1): n times the objects of scale 1.
func At(n int) Size {
	return Size{Gateways: 1000 * n, Routes: 10000 * n, Policies: 5000 * n, Namespaces: 100 * n}
}

// String describes the size as the harnesses print it.
func (s Size) String() string {
	return fmt.Sprintf("%s Gateways, %s HTTPRoutes x 10 rules, %s Services, %s policies in %s namespaces",
		thousands(s.Gateways), thousands(s.Routes), thousands(s.Routes), thousands(s.Policies), thousands(s.Namespaces))
}

// Namespace is the namespace of route (and Service) number r.
func (s Size) Namespace(r int) string { return fmt.Sprintf("app-%d", r%s.Namespaces) }

// Objects calls emit with every object of a cluster of size s, non-policy objects first.
func Objects(s Size, emit func(map[string]any) error) error {
	Gateways, Routes, Policies := s.Gateways, s.Routes, s.Policies
	for g := 0; g < Gateways; g++ {
		if err := emit(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": fmt.Sprintf("gw-%d", g), "namespace": "infra"},
			"spec": map[string]any{"gatewayClassName": "example", "listeners": []any{
				map[string]any{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}},
			}}}); err != nil {
			return err
		}
	}
	for r := 0; r < Routes; r++ {
		ns := s.Namespace(r)
		rules := make([]any, 10)
		for i := range rules {
			rules[i] = map[string]any{"name": fmt.Sprintf("rule-%d", i), "backendRefs": []any{map[string]any{"name": fmt.Sprintf("svc-%d", r), "port": 443}}}
		}
		if err := emit(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
			"metadata": map[string]any{"name": fmt.Sprintf("route-%d", r), "namespace": ns},
			"spec":     map[string]any{"parentRefs": []any{map[string]any{"name": fmt.Sprintf("gw-%d", r*Gateways/Routes), "namespace": "infra"}}, "rules": rules}}); err != nil {
			return err
		}
		if err := emit(map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": fmt.Sprintf("svc-%d", r), "namespace": ns},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443}}}}); err != nil {
			return err
		}
	}
	for i := 0; i < Policies; i++ {
		r := i * 2 % Routes
		ns := s.Namespace(r)
		meta := map[string]any{"name": fmt.Sprintf("p-%d", i), "namespace": ns}
		var obj map[string]any
		switch i % 3 {
		case 0:
			obj = map[string]any{"apiVersion": "policies.controller.io/v1", "kind": "ColorPolicy", "metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)}},
				"colors":     map[string]any{"light": "blue"}}}
		case 1:
			obj = map[string]any{"apiVersion": "kuadrant.io/v1", "kind": "RateLimitPolicy", "metadata": meta, "spec": map[string]any{
				"targetRef": map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": fmt.Sprintf("route-%d", r)},
				"defaults": map[string]any{"strategy": "merge", "limits": map[string]any{
					"per-user": map[string]any{"rates": []any{map[string]any{"limit": 10, "window": "1m"}}}}}}}
		default:
			obj = map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy", "metadata": meta, "spec": map[string]any{
				"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", r), "sectionName": "https"}},
				"validation": map[string]any{"hostname": "svc.example", "wellKnownCACertificates": "System"}}}
		}
		if err := emit(obj); err != nil {
			return err
		}
	}
	return nil
}

// WriteFiles writes a cluster of size s as JSON manifests, split into files under the 4 MiB
// limit `webhook` reads.
func WriteFiles(dir string, s Size) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var (
		file  *os.File
		w     *bufio.Writer
		n     int
		count int
	)
	err := Objects(s, func(obj map[string]any) error {
		if w == nil || count%2000 == 0 {
			if w != nil {
				if err := w.Flush(); err != nil {
					return err
				}
				file.Close()
			}
			var err error
			if file, err = os.Create(filepath.Join(dir, fmt.Sprintf("%03d.json", n))); err != nil {
				return err
			}
			n++
			w = bufio.NewWriter(file)
		}
		count++
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return file.Close()
}

// thousands writes n with thousands separated by commas.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
