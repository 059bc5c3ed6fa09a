package crdvalidation

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/test/harness/synthetic"
	"github.com/policyattachment/webhook/test/kindsdrift"
)

// BenchmarkAdmit: one object of the synthetic cluster through its real Gateway API CRD, as
// `webhook check` admits each document given with CRDs.
func BenchmarkAdmit(b *testing.B) {
	dir, err := kindsdrift.ModuleDir(context.Background(), "sigs.k8s.io/gateway-api", gatewayAPIVersion(b))
	require.NoError(b, err)
	s := New()
	for _, f := range []string{"httproutes", "backendtlspolicies", "gateways"} {
		data, err := os.ReadFile(filepath.Join(dir, "config", "crd", "experimental", "gateway.networking.k8s.io_"+f+".yaml"))
		require.NoError(b, err)
		require.NoError(b, s.Add(object(b, string(data))))
	}
	objects := map[string]map[string]any{}
	require.NoError(b, synthetic.Objects(synthetic.At(1), func(obj map[string]any) error {
		if kind := obj["kind"].(string); objects[kind] == nil {
			objects[kind] = obj
		}
		return nil
	}))
	for _, kind := range []string{"HTTPRoute", "BackendTLSPolicy", "Gateway"} {
		b.Run(kind, func(b *testing.B) {
			obj := objects[kind]
			for b.Loop() {
				r, err := s.Admit(context.Background(), obj, nil)
				if r != nil || err != nil {
					b.Fatal(r, err)
				}
			}
		})
	}
}
