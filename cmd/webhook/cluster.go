package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/clusterstate"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// clusterFlags are kubectl's connection flags (--kubeconfig, --context, -n, --as, --server,
// ...), bound by client-go's clientcmd as kubectl binds them, for the commands that read a
// live cluster.
type clusterFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	c.rules = clientcmd.NewDefaultClientConfigLoadingRules()
	c.overrides = &clientcmd.ConfigOverrides{}
	fs.StringVar(&c.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ContextOverrideFlags.ClusterName.LongName = "" // --cluster is ours: read the live cluster
	clientcmd.BindOverrideFlags(c.overrides, fs, names)
}

func (c *clusterFlags) loader() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(c.rules, c.overrides)
}

func (c *clusterFlags) restConfig() (*rest.Config, error) {
	return c.loader().ClientConfig()
}

// namespace is -n, else the kubeconfig context's namespace, else "default".
func (c *clusterFlags) namespace() string {
	if ns, _, err := c.loader().Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}

// read lists every object the rules read from the cluster, with progress on progress; with
// a target, only what the paths through it need.
func (c *clusterFlags) read(conf *configuration, target *policy.TargetKey, progress io.Writer) ([]manifests.Document, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	var docs []manifests.Document
	if target != nil {
		docs, err = clusterstate.ReadAround(ctx, cfg, conf.table, *target, progress)
	} else {
		docs, err = clusterstate.ReadCluster(ctx, cfg, conf.table, progress)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return docs, nil
}

// crds reads the cluster's CustomResourceDefinitions of the kinds among docs, so that docs
// are judged as its API server would judge them before any webhook.
func (c *clusterFlags) crds(docs []manifests.Document) ([]manifests.Document, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	var gks []schema.GroupKind
	for _, d := range docs {
		apiVersion, _ := d.Object["apiVersion"].(string)
		kind, _ := d.Object["kind"].(string)
		if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
			gks = append(gks, schema.GroupKind{Group: gv.Group, Kind: kind})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	crds, err := clusterstate.ReadCRDs(ctx, cfg, gks)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return crds, nil
}

// state builds the state of the whole cluster, a page at a time (check.StateBuilder), with
// progress on progress.
func (c *clusterFlags) state(conf *configuration, progress io.Writer) (*check.StateBuilder, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	s := check.NewStateBuilder(conf.table)
	if err := clusterstate.EachClusterPage(ctx, cfg, conf.table, progress, s.Add); err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return s, nil
}
