package testkit

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/policyattachment/webhook/pkg/claims"
)

// ClaimLeases are the claim Leases (package claims) leases lists, by name, each with its
// holder ("" released): what the tests of claims count around a flood or a kill.
func ClaimLeases(t *testing.T, leases coordinationclient.LeaseInterface) map[string]string {
	t.Helper()
	list, err := leases.List(context.Background(), metav1.ListOptions{LabelSelector: claims.LabelClaim + "=true"})
	require.NoError(t, err)
	out := map[string]string{}
	for _, l := range list.Items {
		out[l.Name] = ""
		if l.Spec.HolderIdentity != nil {
			out[l.Name] = *l.Spec.HolderIdentity
		}
	}
	return out
}

// LeasesAdded are the Leases of now that were not in before, each written "name held for
// "holder"", sorted.
func LeasesAdded(before, now map[string]string) []string {
	var out []string
	for name, holder := range now {
		if _, ok := before[name]; !ok {
			out = append(out, name+" held for "+strconv.Quote(holder))
		}
	}
	slices.Sort(out)
	return out
}
