// Command controller is cert-manager's controller for make e2e-node, built from the packages
// of the github.com/cert-manager/cert-manager module (see ../README.md for why the project
// carries its own main). It runs the controllers a private CA needs: Issuers and
// ClusterIssuers, Certificates from trigger to issuing, and CertificateRequests for the
// SelfSigned and CA issuers, approved by cert-manager's own approver. ACME, Vault and Venafi
// are not compiled in. Health is served where upstream's chart probes it (:9403/livez).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/healthz"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	// Each package registers its controller with controller.Known().
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	logf.InitLogs()
	defer logf.FlushLogs()

	// The chart passes leader-election, ACME and config flags this build has no use for:
	// they are accepted and ignored, so the chart's Deployment runs unchanged.
	flags := pflag.NewFlagSet("controller", pflag.ExitOnError)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	flags.AddGoFlagSet(klogFlags)
	resourceNamespace := flags.String("cluster-resource-namespace", "cert-manager", "namespace holding the Secrets of ClusterIssuers")
	_ = flags.Parse(os.Args[1:])

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	if err := run(ctx, *resourceNamespace); err != nil {
		logf.FromContext(ctx).Error(err, "controller stopped")
		os.Exit(1)
	}
}

// run starts every compiled-in controller. The options are upstream's defaults, set here
// because the module's config defaulting imports the Venafi issuer, whose dependency the Go
// module proxy does not serve at the version cert-manager requires.
func run(ctx context.Context, resourceNamespace string) error {
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace:        resourceNamespace,
			ClusterIssuerAmbientCredentials: true,
		},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return fmt.Errorf("controller context: %w", err)
	}
	shared, err := factory.Build()
	if err != nil {
		return fmt.Errorf("controller context: %w", err)
	}
	health, err := net.Listen("tcp", ":9403")
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return healthz.NewServer(20*time.Second).Start(gctx, health) })
	for name, constructor := range controller.Known() {
		c, err := constructor(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		logf.FromContext(ctx).Info("starting", "controller", name)
		g.Go(func() error { return c.Run(5, gctx) })
	}
	shared.SharedInformerFactory.Start(gctx.Done())
	shared.KubeSharedInformerFactory.Start(gctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(gctx.Done())
	return g.Wait()
}
