// Command cainjector is cert-manager's CA injector for make e2e-node, built from the packages
// of the github.com/cert-manager/cert-manager module (see ../README.md): it copies a
// Certificate's CA into the webhook configurations, APIServices and CRDs annotated with
// cert-manager.io/inject-ca-from, in every namespace. One replica, so no leader election;
// the chart's flags are ignored.
package main

import (
	"context"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cert-manager/cert-manager/policyattachment-e2e/internal/component"
)

func main() {
	component.Main("cainjector", run)
}

func run(ctx context.Context) error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(util.RestConfigWithUserAgent(ctrl.GetConfigOrDie(), "cainjector"), ctrl.Options{
		Scheme: scheme,
		Cache:  cache.Options{ReaderFailOnMissingInformer: true},
		// Secrets are read directly, as upstream does, rather than cached cluster-wide.
		Client:  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}
	enabled := map[string]bool{}
	for _, kind := range []string{
		cainjector.MutatingWebhookConfigurationName,
		cainjector.ValidatingWebhookConfigurationName,
		cainjector.APIServiceName,
		cainjector.CustomResourceDefinitionName,
	} {
		enabled[kind] = true
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor:        enabled,
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
