// Command localcluster is `make run`: it starts a real local control plane (kube-apiserver
// + etcd, no Docker), installs the Gateway API and test policy CRDs and the webhook
// configurations, runs the webhook, applies manifests in order printing what kubectl would
// print, then keeps serving until Ctrl-C with a kubeconfig for you to use.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
)

func main() {
	var files stringList
	flag.Var(&files, "f", "file or folder of manifests to apply in order (repeatable)")
	kubeconfig := flag.String("kubeconfig-out", filepath.Join(".local", "kube", "kubeconfig"), "where to write the kubeconfig of the local cluster (its folder is made private, the ones above it are not)")
	crds := flag.String("crds", "test/crds", "folder of extra CRDs to install (the policy kinds)")
	current := flag.Bool("current", false, "use the cluster of the current KUBECONFIG instead of starting one; its API server must reach -webhook-host")
	host := flag.String("webhook-host", "", "with -current: this machine's address as the API server reaches it (default: the first non-loopback IPv4)")
	port := flag.Int("port", 9443, "with -current: the webhook's HTTPS port")
	flag.Parse()
	var err error
	if *current {
		err = runAttached(files, *host, *port, *crds)
	} else {
		err = run(files, *kubeconfig, *crds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(files []string, kubeconfig, crds string) error {
	docs, err := manifests.Read(files, os.Stdin, manifests.Options{Recursive: true})
	if err != nil && len(files) > 0 {
		return err
	}
	fmt.Println("Starting kube-apiserver and etcd...")
	cluster, err := localcluster.Start(crds)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping the control plane...")
		_ = cluster.Stop()
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done, err := cluster.StartWebhook(ctx, kinds.BuiltinKindTable(), logr.Discard())
	if err != nil {
		return err
	}
	fmt.Printf("The webhook serves %s; applying %d objects.\n\n", cluster.BaseURL, len(docs))
	if err := apply(ctx, cluster.Config, docs); err != nil {
		return err
	}
	if err := cluster.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	fmt.Printf("\nThe cluster and the webhook keep running. In another shell:\n"+
		"  export KUBECONFIG=%s\n  kubectl get colorpolicies -A -o yaml   # the impact annotations\n"+
		"  kubectl apply -f examples/50-conflicted.yaml\nCtrl-C stops everything.\n", kubeconfig)
	<-ctx.Done()
	return <-done
}

// runAttached serves the webhook for the cluster of the current KUBECONFIG, and removes
// its webhook configurations on exit so the cluster is never left calling a dead endpoint.
func runAttached(files []string, host string, port int, crds string) error {
	docs, err := manifests.Read(files, os.Stdin, manifests.Options{Recursive: true})
	if err != nil && len(files) > 0 {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	if host == "" {
		if host, err = outboundIPv4(); err != nil {
			return err
		}
	}
	fmt.Printf("Attaching to %s; the webhook will serve https://%s:%d\n", cfg.Host, host, port)
	cluster, err := localcluster.Attach(cfg, host, port, localcluster.DefaultCertDir, crds)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Removing the webhook configurations...")
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "localcluster: removing the webhook configurations failed; delete them by hand:",
				"kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration policyattachment:", err)
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done, err := cluster.StartWebhook(ctx, kinds.BuiltinKindTable(), logr.Discard())
	if err != nil {
		return err
	}
	if err := apply(ctx, cfg, docs); err != nil {
		return err
	}
	fmt.Println("\nServing until Ctrl-C; then the webhook configurations are removed.")
	<-ctx.Done()
	return <-done
}

func outboundIPv4() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("no non-loopback IPv4 address; pass -webhook-host")
}

// apply creates each document in order and prints what kubectl prints.
func apply(ctx context.Context, cfg *rest.Config, docs []manifests.Document) error {
	var warnings []string
	c := rest.CopyConfig(cfg)
	c.WarningHandler = warningFunc(func(text string) { warnings = append(warnings, text) })
	cl, err := client.New(c, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		return err
	}
	for i, d := range docs {
		obj := &unstructured.Unstructured{Object: d.Object}
		gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
		if obj.GetNamespace() == "" && namespaced(cl, obj) {
			obj.SetNamespace("default")
		}
		name := strings.ToLower(obj.GetKind())
		if gv.Group != "" {
			name += "." + gv.Group
		}
		name += "/" + obj.GetName()
		warnings = nil
		err := cl.Create(ctx, obj)
		for _, w := range warnings {
			fmt.Printf("Warning: %s\n", w)
		}
		var status apierrors.APIStatus
		switch {
		case err == nil:
			fmt.Printf("%s created\n", name)
		case apierrors.IsAlreadyExists(err):
			fmt.Printf("%s unchanged\n", name)
		case errors.As(err, &status):
			fmt.Printf("Error from server (%s): error when creating %q: %s\n", status.Status().Reason, d.Source, err)
		default:
			return fmt.Errorf("%s: %w", d.Where(), err)
		}
		// Let the webhook's watches see the topology before the policies that follow.
		if i+1 < len(docs) && docs[i+1].Source != d.Source {
			time.Sleep(time.Second)
		}
	}
	return nil
}

func namespaced(cl client.Client, obj *unstructured.Unstructured) bool {
	ok, err := cl.IsObjectNamespaced(obj)
	return err == nil && ok
}

type warningFunc func(string)

func (f warningFunc) HandleWarningHeader(_ int, _ string, text string) { f(text) }

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
