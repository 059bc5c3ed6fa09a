package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/synthetic"
)

// populateCluster starts a local control plane holding the synthetic cluster (created
// through the API server, no webhook registered) and returns its kubeconfig and a stop
// function: the server then lists and watches it as it would a real cluster.
func populateCluster(work string, size synthetic.Size) (kubeconfig string, stop func(), err error) {
	fmt.Printf("load: starting kube-apiserver and etcd, and creating the synthetic cluster in it (%s)...\n", size)
	cp, err := localcluster.StartControlPlane("test/crds")
	if err != nil {
		return "", nil, err
	}
	stopPlane := func() { _ = cp.Stop() }
	defer func() {
		if err != nil {
			stopPlane()
		}
	}()
	kubeconfig, err = filepath.Abs(filepath.Join(work, "kubeconfig"))
	if err != nil {
		return "", nil, err
	}
	if err = cp.WriteKubeconfig(kubeconfig); err != nil {
		return "", nil, err
	}
	cfg := *cp.Config
	cfg.QPS, cfg.Burst = 2000, 4000
	cl, err := client.New(&cfg, client.Options{})
	if err != nil {
		return "", nil, err
	}
	ctx := context.Background()
	namespaces := []string{"infra"}
	for i := 0; i < size.Namespaces; i++ {
		namespaces = append(namespaces, fmt.Sprintf("app-%d", i))
	}
	for _, ns := range namespaces {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if err = cl.Create(ctx, obj); err != nil {
			return "", nil, err
		}
	}
	start := time.Now()
	objects := make(chan map[string]any, 256)
	var created atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range objects {
				if err := cl.Create(ctx, &unstructured.Unstructured{Object: obj}); err != nil {
					once.Do(func() { firstErr = err })
					continue
				}
				created.Add(1)
			}
		}()
	}
	progress := time.NewTicker(15 * time.Second)
	defer progress.Stop()
	go func() {
		for range progress.C {
			fmt.Printf("load: created %d objects so far\n", created.Load())
		}
	}()
	err = synthetic.Objects(size, func(obj map[string]any) error {
		if obj["kind"] == "Service" {
			// Headless: the local API server's service range holds 256 cluster IPs, and
			// nothing here routes traffic.
			obj["spec"].(map[string]any)["clusterIP"] = "None"
		}
		objects <- obj
		return nil
	})
	close(objects)
	wg.Wait()
	if err == nil {
		err = firstErr
	}
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("load: created %d objects in %s\n", created.Load(), time.Since(start).Round(time.Second))
	return kubeconfig, stopPlane, nil
}
