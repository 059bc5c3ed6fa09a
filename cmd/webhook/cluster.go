package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"golang.org/x/term"
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
// live cluster, and -v for the progress of a read.
type clusterFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	verbose   verbosity
}

// register binds the connection flags and -v, for the commands that read a cluster.
func (c *clusterFlags) register(fs *pflag.FlagSet) {
	c.registerConnection(fs)
	fs.VarPF(&c.verbose, "verbose", "v", "print a line per kind read from the cluster on stderr (kubectl's -v=N works too: any N above 0); "+
		"without it, a terminal shows one progress line and a pipe or a CI log nothing").NoOptDefVal = "true"
}

// registerConnection binds the connection flags alone, for a command that shows no progress.
func (c *clusterFlags) registerConnection(fs *pflag.FlagSet) {
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

// read lists every object the rules read from the cluster, its progress shown on stderr
// (progressOn); with a target, only what the paths through it need.
func (c *clusterFlags) read(conf *configuration, target *policy.TargetKey, stderr io.Writer) ([]manifests.Document, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	progress := c.progressOn(stderr, cfg)
	defer progress.Done()
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

// stored is what check judges manifests against on the cluster (check.RunOnto's and
// check.Diff's stored state): every object the rules read, and the CRDs of the kinds among
// docs.
func (c *clusterFlags) stored(conf *configuration, docs []manifests.Document, stderr io.Writer) ([]manifests.Document, error) {
	stored, err := c.read(conf, nil, stderr)
	if err != nil {
		return nil, err
	}
	crds, err := c.crds(docs)
	if err != nil {
		return nil, err
	}
	return append(stored, crds...), nil
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

// state builds the state of the whole cluster, a page at a time (check.StateBuilder), its
// progress shown on stderr (progressOn).
func (c *clusterFlags) state(conf *configuration, stderr io.Writer) (*check.StateBuilder, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	progress := c.progressOn(stderr, cfg)
	defer progress.Done()
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	s := check.NewStateBuilder(conf.table)
	if err := clusterstate.EachClusterPage(ctx, cfg, conf.table, progress, s.Add); err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return s, nil
}

// progressOn shows a cluster read's progress on stderr: a line per kind with -v; else one
// line updated in place when stderr is a terminal; else (a pipe, a CI log) nothing. The
// API server's warnings are written there as kubectl writes them ("Warning: ..."), clear of
// the progress line, in every mode.
func (c *clusterFlags) progressOn(stderr io.Writer, cfg *rest.Config) *clusterstate.Progress {
	mode, width := clusterstate.ProgressQuiet, 0
	if c.verbose > 0 {
		mode = clusterstate.ProgressVerbose
	} else if terminal, columns := isTerminal(stderr); terminal {
		mode, width = clusterstate.ProgressLine, columns
	}
	p := clusterstate.NewProgress(stderr, mode, width)
	cfg.WarningHandler = rest.NewWarningWriter(p, rest.WarningWriterOptions{Deduplicate: true})
	return p
}

// isTerminal reports whether w is a terminal, and its width in columns (0 when unknown).
// Tests replace it to pose as one.
var isTerminal = func(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return true, 0
	}
	return true, width
}

// verbosity is -v: a switch (-v, --verbose, --verbose=false) that also takes kubectl's
// levels (-v=6), any level above 0 turning it on.
type verbosity int

func (v *verbosity) Set(s string) error {
	if on, err := strconv.ParseBool(s); err == nil {
		*v = 0
		if on {
			*v = 1
		}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want true, false or a level (0, 1, 2...)")
	}
	*v = verbosity(n)
	return nil
}

func (v *verbosity) String() string { return strconv.FormatBool(*v > 0) }

// Type is "bool", so that help shows -v as the switch it mostly is.
func (v *verbosity) Type() string { return "bool" }
