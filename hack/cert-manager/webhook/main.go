// Command webhook is cert-manager's own admission webhook for make e2e-node, built from the
// packages of the github.com/cert-manager/cert-manager module (see ../README.md): it
// validates and converts cert-manager's resources and serves a certificate it issues itself,
// exactly as upstream's binary does. It takes upstream's flags, so the chart's args apply.
package main

import (
	"context"
	"os"

	"github.com/cert-manager/cert-manager/internal/apis/config/webhook/validation"
	cmwebhook "github.com/cert-manager/cert-manager/internal/webhook"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"
	"github.com/cert-manager/cert-manager/pkg/webhook/options"
	"github.com/spf13/pflag"

	"github.com/cert-manager/cert-manager/policyattachment-e2e/internal/component"
)

func main() {
	component.Main("webhook", run)
}

func run(ctx context.Context) error {
	cfg, err := options.NewWebhookConfiguration()
	if err != nil {
		return err
	}
	flags := pflag.NewFlagSet("webhook", pflag.ExitOnError)
	options.AddConfigFlags(flags, cfg)
	_ = flags.Parse(os.Args[1:])
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return err
	}
	if errs := validation.ValidateWebhookConfiguration(cfg, nil); len(errs) > 0 {
		return errs.ToAggregate()
	}
	if err := logf.ValidateAndApply(&cfg.Logging); err != nil {
		return err
	}
	srv, err := cmwebhook.NewCertManagerWebhookServer(logf.FromContext(ctx), *cfg)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
