package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// webhookConfigurations are the two objects through which the API server calls the webhook.
var webhookConfigurations = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
}

func newUninstallCommand(s streams, code *int) *cobra.Command {
	var (
		cluster clusterFlags
		name    string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "uninstall [--name NAME] [--kubeconfig FILE] [--context NAME]",
		Short: "Remove the webhook configurations, so the API server stops calling the webhook",
		Long: "Deletes the ValidatingWebhookConfiguration and the MutatingWebhookConfiguration named\n" +
			"--name, and waits until both are gone. Run it before removing the webhook's Deployment\n" +
			"(the Helm chart's pre-delete hook does): with them gone, the cluster behaves as it did\n" +
			"without the webhook, and no write fails on a webhook that no longer answers. A\n" +
			"configuration already absent is not an error. It needs get and delete on the two\n" +
			"configurations and nothing else.",
		RunE: func(*cobra.Command, []string) error {
			*code = runUninstall(&cluster, name, timeout, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "policyattachment", "name of the two webhook configurations")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the API server")
	cluster.registerConnection(cmd.Flags())
	return cmd
}

func runUninstall(cluster *clusterFlags, name string, timeout time.Duration, s streams) int {
	cfg, err := cluster.restConfig()
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("uninstall"), err)
		return exitBadInput
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(s.err, "%s: %v\n", progName("uninstall"), err)
		return exitBadInput
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, gvr := range webhookConfigurations {
		what := fmt.Sprintf("%s.%s/%s", gvr.Resource[:len(gvr.Resource)-1], gvr.Group, name)
		existed, err := deleteAndWait(ctx, client.Resource(gvr), name)
		if err != nil {
			fmt.Fprintf(s.err, "%s: %s: %v\n", progName("uninstall"), what, err)
			return exitBadInput
		}
		if existed {
			fmt.Fprintf(s.out, "%s deleted\n", what)
		} else {
			fmt.Fprintf(s.out, "%s not found, nothing to delete\n", what)
		}
	}
	return exitOK
}

// deleteAndWait deletes the named object and returns once a read no longer finds it, and
// whether it was there to delete.
func deleteAndWait(ctx context.Context, client dynamic.ResourceInterface, name string) (bool, error) {
	existed := true
	if err := client.Delete(ctx, name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		existed = false
	} else if err != nil {
		return false, err
	}
	for {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return existed, nil
		}
		if err != nil {
			return existed, err
		}
		select {
		case <-ctx.Done():
			return existed, fmt.Errorf("still present after the deletion: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
