package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/reports"
	"github.com/policyattachment/webhook/pkg/rules/impact"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

type reportFlags struct {
	manifests              manifestFlags
	configFile, kubeconfig string
	interval               time.Duration
	once                   bool
	writesPerSecond        float64
	log                    logFlags
}

func newReportCommand(s streams, code *int) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report [--interval 1m] [--once] [--kubeconfig FILE] [--config FILE] | report (-f PATH [-f PATH]... [-R] | -k DIR)",
		Short: "Write each namespace's current truth as an OpenReports Report",
		Long: "Writes what is true now of each namespace's policies as an OpenReports Report\n" +
			"(openreports.io/v1alpha1, named policyattachment, labelled\n" +
			"app.kubernetes.io/managed-by=policyattachment-webhook) in that namespace: one result\n" +
			"per policy with its current impact (pass when enforced on every path, warn when\n" +
			"overridden anywhere or reaching nothing) and one per audit finding (fail when\n" +
			"admission would deny it today, warn under Warn or DryRun), and one per disagreement\n" +
			"between the status a policy's controller wrote and the prediction (rule prediction,\n" +
			"warn; docs/status-comparison.md). A Report is rewritten only when a result changed,\n" +
			"and deleted when its namespace holds no policy. Messages follow\n" +
			"the tenant rules of admission (docs/security.md). Needs the webhook's read permissions\n" +
			"and get, list, create, update and delete on reports.openreports.io; the OpenReports CRD\n" +
			"must be installed. With -f it reads manifests and prints the Reports instead.",
		RunE: func(*cobra.Command, []string) error {
			*code = runReport(f, s)
			return nil
		},
	}
	fs := cmd.Flags()
	f.manifests.register(fs, "print the Reports for these manifests (as if stored) as YAML instead of writing them to a cluster")
	fs.StringVar(&f.configFile, "config", "", configFlagHelp)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.DurationVar(&f.interval, "interval", time.Minute, "how often to read the cluster and write the Reports that changed")
	fs.BoolVar(&f.once, "once", false, "write one round and exit (for a CronJob or a script); exit 1 if it failed")
	fs.Float64Var(&f.writesPerSecond, "writes-per-second", 5, "at most this many Report creates, updates and deletes per second")
	f.log.register(fs)
	return cmd
}

func runReport(f reportFlags, s streams) int {
	configFile, kubeconfig, interval, once, writesPerSecond := f.configFile, f.kubeconfig, f.interval, f.once, f.writesPerSecond
	stdin, stdout, stderr := s.in, s.out, s.err
	if interval <= 0 || writesPerSecond <= 0 {
		fmt.Fprintf(stderr, "%s: --interval and --writes-per-second must be positive\n", progName("report"))
		return exitBadInput
	}
	conf, err := loadConfig(configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("report"), err)
		return exitBadInput
	}
	if f.manifests.given() {
		return printReports(&f.manifests, stdin, conf, stdout, stderr)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("report"), err)
		return exitBadInput
	}
	scheme := runtime.NewScheme()
	if err := reportsv1alpha1.Install(scheme); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("report"), err)
		return exitBadInput
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(stderr, "%s: connecting to the API server: %v\n", progName("report"), err)
		return exitBadInput
	}
	log := f.log.logger(stderr)
	ctrl.SetLogger(log)
	loop := &reports.Loop{
		ReadWithStatuses: func(ctx context.Context) (topology.State, *impact.Observations, error) {
			ctx, cancel := context.WithTimeout(ctx, clusterReadTimeout)
			defer cancel()
			state := check.NewStateBuilder(conf.table)
			if err := clusterstate.EachClusterPage(ctx, cfg, conf.table, io.Discard, state.Add); err != nil {
				return nil, nil, err
			}
			snap, observed := state.SnapshotWithStatuses()
			return snap, observed, nil
		},
		Config:   conf.settings,
		Writer:   &reports.Writer{Client: c, Limiter: flowcontrol.NewTokenBucketRateLimiter(float32(writesPerSecond), max(1, int(writesPerSecond)))},
		Interval: interval,
		Log:      log,
	}
	log.Info("writing reports", "version", buildVersion(), "interval", interval.String(), "writesPerSecond", writesPerSecond)
	if once {
		if _, err := loop.Round(context.Background()); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", progName("report"), err)
			return exitDenied
		}
		return exitOK
	}
	loop.Run(ctrl.SetupSignalHandler())
	return exitOK
}

// printReports prints, as YAML documents, the Reports the manifests' policies would get.
func printReports(m *manifestFlags, stdin io.Reader, conf *configuration, stdout, stderr io.Writer) int {
	docs, err := m.read(stdin)
	if err == nil {
		var state *check.StateBuilder
		if state, err = check.StateOf(docs, conf.table); err == nil {
			snap, observed := state.SnapshotWithStatuses()
			built := reports.BuildWith(snap, conf.settings, observed)
			for _, namespace := range slices.Sorted(maps.Keys(built)) {
				var data []byte
				if data, err = yaml.Marshal(built[namespace]); err != nil {
					break
				}
				fmt.Fprintf(stdout, "---\n%s", data)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName("report"), err)
		return exitBadInput
	}
	return exitOK
}
