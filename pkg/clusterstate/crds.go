package clusterstate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/manifests"
)

// ReadCRDs reads, from the API server, the CustomResourceDefinitions of the kinds in gks
// that the cluster serves from a CRD (kinds it does not serve, and those it serves
// itself, are skipped): what the offline doors need to judge manifests as the cluster's API server
// would before any webhook. One GET per kind, by the CRD's name (plural.group); reading
// every CRD would cost megabytes on a cluster with Envoy Gateway's.
func ReadCRDs(ctx context.Context, cfg *rest.Config, gks []schema.GroupKind) ([]manifests.Document, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	var docs []manifests.Document
	seen := map[schema.GroupKind]bool{}
	for _, gk := range gks {
		if seen[gk] {
			continue
		}
		seen[gk] = true
		crd, err := readCRD(ctx, c, c.RESTMapper(), gk)
		if err != nil {
			return nil, err
		}
		if crd != nil {
			docs = append(docs, manifests.Document{Source: "cluster", Index: len(docs) + 1, Object: crd.Object})
		}
	}
	return docs, nil
}
