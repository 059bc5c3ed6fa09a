package integration

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/reports"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// TestReportsTellTheCurrentTruth: `webhook report`'s loop, against the API server with the
// OpenReports CRD its module ships. A route policy reads Enforced in its namespace's Report;
// a Gateway-level override created later in another tenant's namespace turns it Overridden
// within one interval, described by kind and namespace only. A round with nothing changed
// writes nothing. A tenant who may read reports in their own namespace reads theirs and is
// refused the other's.
func TestReportsTellTheCurrentTruth(t *testing.T) {
	ctx := context.Background()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openreports/reports-api").Output()
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(strings.TrimSpace(string(dir)), "config", "crd", "openreports.io_reports.yaml")}, ErrorIfPathMissing: true})
	require.NoError(t, err)

	cl, _ := newClient(t)
	for _, ns := range []string{"rep-infra", "rep-app", "rep-payments"} {
		namespace(t, cl, ns)
	}
	createDocs(t, cl, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: rep-infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]`, `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: tenants, namespace: rep-infra}
spec:
  from: [{group: policies.controller.io, kind: ColorPolicy, namespace: rep-payments}]
  to: [{group: gateway.networking.k8s.io, kind: Gateway}]`, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: rep-app}
spec:
  parentRefs: [{name: gw, namespace: rep-infra}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]`, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: route-defaults, namespace: rep-app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: store}]
  defaults: {color: green}`)

	scheme := runtime.NewScheme()
	require.NoError(t, reportsv1alpha1.Install(scheme))
	rc, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	table := kinds.BuiltinKindTable()
	loop := &reports.Loop{
		Read: func(ctx context.Context) (topology.State, error) {
			docs, err := clusterstate.ReadCluster(ctx, cfg, table, io.Discard)
			if err != nil {
				return nil, err
			}
			return check.State(docs, table)
		},
		Writer:   &reports.Writer{Client: rc},
		Interval: 200 * time.Millisecond,
		Log:      testLogger(),
	}
	running, stop := context.WithCancel(ctx)
	defer stop()
	loopDone := make(chan struct{})
	go func() { loop.Run(running); close(loopDone) }()

	impactOf := func(namespace string) (reportsv1alpha1.ReportResult, bool) {
		r := &reportsv1alpha1.Report{}
		if err := rc.Get(ctx, client.ObjectKey{Namespace: namespace, Name: reports.Name}, r); err != nil {
			return reportsv1alpha1.ReportResult{}, false
		}
		for _, res := range r.Results {
			if res.Rule == reports.RuleImpact && len(res.Subjects) == 1 && res.Subjects[0].Name == "route-defaults" {
				return res, true
			}
		}
		return reportsv1alpha1.ReportResult{}, false
	}
	var got reportsv1alpha1.ReportResult
	require.Eventually(t, func() bool {
		var ok bool
		got, ok = impactOf("rep-app")
		return ok && got.Result == "pass"
	}, 20*time.Second, 50*time.Millisecond, "the route policy's Report")
	assert.Equal(t, "Atomic defaults on HTTPRoute rep-app/store: enforced on 1 of 1 path", got.Description)
	assert.Equal(t, "policies.controller.io/v1", got.Subjects[0].APIVersion)

	require.NoError(t, cl.Create(ctx, object(t, `
apiVersion: policies.controller.io/v1
kind: ColorPolicy
metadata: {name: payments-secret-policy, namespace: rep-payments}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: rep-infra}]
  overrides: {color: payments-internal-token-abc123}`)))
	require.Eventually(t, func() bool {
		var ok bool
		got, ok = impactOf("rep-app")
		return ok && got.Result == "warn"
	}, 20*time.Second, 50*time.Millisecond, "Overridden within an interval")
	assert.Equal(t, `Atomic defaults on HTTPRoute rep-app/store: enforced on 0 of 1 path, overridden on 1 by a ColorPolicy in namespace "rep-payments"`, got.Description)
	assert.Equal(t, map[string]string{"status": "Overridden", "contexts": "1", "enforced": "0", "overridden": "1",
		"overriddenBy": `a ColorPolicy in namespace "rep-payments"`,
		"ancestors":    "Gateway rep-infra/gw: Accepted, Overridden (HTTPRoute rep-app/store: Accepted, Overridden)"}, got.Properties)
	stop()
	<-loopDone
	// One round settles what the loop may have left half-written when it stopped, and what
	// other tests changed in their namespaces meanwhile; the next, with nothing changed,
	// writes nothing.
	_, err = loop.Round(ctx)
	require.NoError(t, err)

	app := &reportsv1alpha1.Report{}
	require.NoError(t, rc.Get(ctx, client.ObjectKey{Namespace: "rep-app", Name: reports.Name}, app))
	stats, err := loop.Round(ctx)
	require.NoError(t, err)
	assert.Zero(t, stats.Created+stats.Updated+stats.Deleted, "nothing changed, nothing written: %+v", stats)
	assert.NotZero(t, stats.Unchanged)
	again := &reportsv1alpha1.Report{}
	require.NoError(t, rc.Get(ctx, client.ObjectKey{Namespace: "rep-app", Name: reports.Name}, again))
	assert.Equal(t, app.ResourceVersion, again.ResourceVersion)

	// A tenant reads their own namespace's Report, none of the other's.
	admin := kubernetes.NewForConfigOrDie(cfg).RbacV1()
	_, err = admin.Roles("rep-app").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "report-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"openreports.io"}, Resources: []string{"reports"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RoleBindings("rep-app").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "report-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "report-reader"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "app-tenant"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tenantCfg := rest.CopyConfig(cfg)
	tenantCfg.Impersonate = rest.ImpersonationConfig{UserName: "app-tenant", Groups: []string{"system:authenticated"}}
	tenant, err := client.New(tenantCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	mine := &reportsv1alpha1.Report{}
	require.Eventually(t, func() bool {
		return tenant.Get(ctx, client.ObjectKey{Namespace: "rep-app", Name: reports.Name}, mine) == nil
	}, 10*time.Second, 50*time.Millisecond, "RBAC for the tenant takes effect")
	text := reportText(t, mine)
	assert.NotContains(t, text, "payments-secret-policy")
	assert.NotContains(t, text, "payments-internal-token-abc123")
	err = tenant.Get(ctx, client.ObjectKey{Namespace: "rep-payments", Name: reports.Name}, &reportsv1alpha1.Report{})
	assert.True(t, apierrors.IsForbidden(err), "the other tenant's Report: %v", err)

	// A namespace that no longer holds a policy loses its Report.
	require.NoError(t, cl.Delete(ctx, object(t, "apiVersion: policies.controller.io/v1\nkind: ColorPolicy\nmetadata: {name: route-defaults, namespace: rep-app}")))
	stats, err = loop.Round(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, stats.Deleted)
	err = rc.Get(ctx, client.ObjectKey{Namespace: "rep-app", Name: reports.Name}, &reportsv1alpha1.Report{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func reportText(t *testing.T, r *reportsv1alpha1.Report) string {
	t.Helper()
	var b strings.Builder
	for _, res := range r.Results {
		b.WriteString(res.Description)
		for k, v := range res.Properties {
			b.WriteString(k + "=" + v + "\n")
		}
	}
	return b.String()
}
