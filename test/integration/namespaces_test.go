package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestSkipLabelIsGuarded: a tenant who may update their namespace cannot label it
// policyattachment.io/webhook=skip (which would switch policy review off there), nor
// create one so labelled; they can change every other label, and nothing of that reaches
// the webhook. Whoever RBAC grants the verb skip (cluster admins, and here a platform user
// bound to the role the manifests ship) changes the label without the webhook being asked
// at all: the configuration's matchConditions leave those writes to the API server.
func TestSkipLabelIsGuarded(t *testing.T) {
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(cfg)
	as := func(user string) kubernetes.Interface {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		return kubernetes.NewForConfigOrDie(c)
	}
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Labels: map[string]string{"team": "a"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	role := func(name string, rules ...rbacv1.PolicyRule) {
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	bind := func(role, user string) {
		_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role + "-" + user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	role("guard-namespace-editor", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create", "update", "patch"}})
	role("guard-namespace-skip", rbacv1.PolicyRule{APIGroups: []string{"policyattachment.io"}, Resources: []string{"namespaces"}, Verbs: []string{"skip"}})
	bind("guard-namespace-editor", "tenant")
	bind("guard-namespace-editor", "platform")
	bind("guard-namespace-skip", "platform")

	label := func(cs kubernetes.Interface, value string) error {
		patch := `{"metadata": {"labels": {"policyattachment.io/webhook": ` + value + `}}}`
		_, err := cs.CoreV1().Namespaces().Patch(ctx, "guarded", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	denied := `admission webhook "namespaces.policyattachment.io" denied the request: the label policyattachment.io/webhook turns policy attachment review off in namespace "guarded", so user "tenant" may not add it: that takes the verb "skip" on namespaces in API group policyattachment.io (RBAC), or a place in the webhook config's skipLabel list`
	var err2 error
	require.Eventually(t, func() bool { err2 = label(as("tenant"), `"skip"`); return err2 != nil }, 10*time.Second, 50*time.Millisecond, "RBAC for the tenant takes effect")
	assert.Equal(t, denied, err2.Error())

	_, err = as("tenant").CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "guarded-new",
		Labels: map[string]string{"policyattachment.io/webhook": "skip"}}}, metav1.CreateOptions{})
	assert.Equal(t, `admission webhook "namespaces.policyattachment.io" denied the request: the label policyattachment.io/webhook turns policy attachment review off in namespace "guarded-new", so user "tenant" may not add it: that takes the verb "skip" on namespaces in API group policyattachment.io (RBAC), or a place in the webhook config's skipLabel list`, errString(err))

	reviews := namespaceReviews(t)
	_, err = as("tenant").CoreV1().Namespaces().Patch(ctx, "guarded", types.MergePatchType, []byte(`{"metadata": {"labels": {"team": "b"}}}`), metav1.PatchOptions{})
	require.NoError(t, err, "every other label is the tenant's")
	require.Eventually(t, func() bool { return label(as("platform"), `"skip"`) == nil }, 10*time.Second, 50*time.Millisecond, "the skip verb lets the platform user label it")
	require.NoError(t, label(admin, "null"), "a cluster admin removes it")
	assert.Equal(t, reviews, namespaceReviews(t), "none of these reached the webhook")
}

func errString(err error) string {
	if err == nil {
		return "<allowed>"
	}
	return err.Error()
}

// namespaceReviews counts the reviews the skip label's guard has answered.
func namespaceReviews(t *testing.T) float64 {
	t.Helper()
	return reviewsAnswered(t, "namespaces")
}

// reviewsAnswered counts the reviews this process has answered for one of the webhook's
// endpoints (the webhook label of policyattachment_reviews_total).
func reviewsAnswered(t *testing.T, webhook string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != "policyattachment_reviews_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "webhook" && l.GetValue() == webhook {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
