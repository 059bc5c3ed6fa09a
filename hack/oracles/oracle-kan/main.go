// Command oracle-kan judges XAccessPolicies by kube-agentic-networking's own controller and
// by the webhook's offline door, and prints where they disagree (`make oracle-kan`).
//
// The controller (cmd/agentic-net-controller of sigs.k8s.io/kube-agentic-networking, built
// from its module by hack/oracles/kan.sh) runs out of cluster against a local kube-apiserver and
// writes each policy's Accepted condition (LimitPerTargetExceeded when a target already has
// five older policies, or an older ExternalAuth one). Each scenario is a Gateway of its own
// and 1-8 policies created one after another, as a cluster with the webhook would hold them:
// each is judged by the controller with the policies admitted before it, and by the offline
// door; one the webhook denies is then deleted.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/kindsdrift"
)

const (
	module         = "sigs.k8s.io/kube-agentic-networking"
	controllerName = "sigs.k8s.io/kube-agentic-networking-controller"
)

func main() { os.Exit(run()) }

// run returns the exit code, after the deferred stops of the controller and control plane.
func run() int {
	controller := flag.String("controller", "", "agentic-net-controller built by hack/oracles/kan.sh (required)")
	version := flag.String("version", "v0.1.0", "the module version the controller was built from (its CRDs are read from it)")
	seed := flag.Uint64("seed", 1, "generator seed")
	n := flag.Int("n", 30, "scenarios")
	flag.Parse()
	if *controller == "" {
		fail("-controller is required (make oracle-kan builds it with hack/oracles/kan.sh)")
	}
	ctx := context.Background()
	dir, err := kindsdrift.ModuleDir(ctx, module, *version)
	check2(err)
	cp, err := localcluster.StartControlPlane(filepath.Join(dir, "k8s", "crds"))
	check2(err)
	defer cp.Stop()

	tmp, err := os.MkdirTemp("", "oracle-kan")
	check2(err)
	defer os.RemoveAll(tmp)
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	check2(clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"local": {Server: cp.Config.Host, CertificateAuthorityData: cp.Config.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {ClientCertificateData: cp.Config.CertData, ClientKeyData: cp.Config.KeyData, Token: cp.Config.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"local": {Cluster: "local", AuthInfo: "admin"}},
		CurrentContext: "local",
	}, kubeconfig))
	logFile, err := os.Create(filepath.Join(tmp, "controller.log"))
	check2(err)
	// No proxy runs here (the local control plane has no nodes); the controller requires an
	// image name for the Deployments it writes.
	cmd := exec.Command(*controller, "--kubeconfig", kubeconfig, "--proxy-image", "envoy:unused")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	check2(cmd.Start())
	defer cmd.Process.Kill()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	cl, err := client.New(cp.Config, client.Options{})
	check2(err)
	create := func(doc string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		check2(yaml.Unmarshal([]byte(doc), &u.Object))
		check2(cl.Create(ctx, u))
		return u
	}
	create(`{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: kan}, spec: {controllerName: "` + controllerName + `"}}`)

	r := rand.New(rand.NewPCG(*seed, 0))
	judged, agree := 0, 0
	var disagreements []string
	for i := range *n {
		ns := fmt.Sprintf("s%d", i)
		gw := fmt.Sprintf("gw-%d", i) // target IDs are by name: one Gateway name per scenario
		create(`{apiVersion: v1, kind: Namespace, metadata: {name: ` + ns + `}}`)
		docs := []string{`{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: ` + gw + `, namespace: ` + ns + `}, spec: {gatewayClassName: kan, listeners: [{name: http, protocol: HTTP, port: 80}]}}`}
		create(docs[0])
		count := 1 + r.IntN(8)
		var admitted []string // the stored policies, as a cluster with the webhook holds them
		for k := range count {
			ref := `{group: gateway.networking.k8s.io, kind: Gateway, name: ` + gw + `}`
			if r.IntN(3) == 0 {
				ref = `{group: gateway.networking.k8s.io, kind: Gateway, name: ` + gw + `, sectionName: http}`
			}
			body := `action: Allow, rules: [{name: r, source: {type: ServiceAccount, serviceAccount: {name: client, namespace: ` + ns + `}}}]`
			if r.IntN(4) == 0 {
				body = `action: ExternalAuth, externalAuth: {protocol: HTTP, http: {}, backendRef: {name: authz, port: 9000}}`
			}
			name := fmt.Sprintf("p%d", k) // names follow creation order: seniority ties (one second) go by name
			u := create(fmt.Sprintf(`{apiVersion: agentic.networking.x-k8s.io/v1alpha1, kind: XAccessPolicy, metadata: {name: %s, namespace: %s}, spec: {targetRefs: [%s], %s}}`, name, ns, ref, body))
			// The controller's verdict on it, with the policies admitted before it.
			theirs := ""
			deadline := time.Now().Add(30 * time.Second)
			for theirs == "" {
				check2(cl.Get(ctx, client.ObjectKeyFromObject(u), u))
				theirs = verdict(*u)
				select {
				case <-exited:
					log, _ := os.ReadFile(logFile.Name())
					fmt.Fprintf(os.Stderr, "oracle-kan: the controller exited:\n%s\n", tail(string(log)))
					return 2
				default:
				}
				if theirs == "" && time.Now().After(deadline) {
					log, _ := os.ReadFile(logFile.Name())
					fmt.Fprintf(os.Stderr, "oracle-kan: %s/%s: no verdict from the controller within 30 s:\n%s\n", ns, name, tail(string(log)))
					return 2
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Ours: the offline door on the Gateway, the admitted policies, then this one.
			stored := u.DeepCopy()
			delete(stored.Object, "status")
			unstructured.RemoveNestedField(stored.Object, "metadata", "managedFields")
			b, err := yaml.Marshal(stored.Object)
			check2(err)
			parsed, err := manifests.Decode(ns, []byte(strings.Join(append(append(append([]string{}, docs...), admitted...), string(b)), "\n---\n")))
			check2(err)
			report, err := check.Run(parsed, kinds.BuiltinKindTable(), nil)
			check2(err)
			res := report.Results[len(report.Results)-1]
			judged++
			ours := "Accepted"
			if !res.Allowed {
				ours = "denied " + res.Denials[0].Reason
			}
			if res.Allowed == (theirs == "Accepted") {
				agree++
			} else {
				disagreements = append(disagreements, fmt.Sprintf("%s/%s: ours %s, the controller %s", ns, name, ours, theirs))
			}
			if res.Allowed {
				admitted = append(admitted, string(b))
			} else {
				check2(cl.Delete(ctx, u)) // the webhook would have refused it: the cluster never holds it
			}
		}
	}
	fmt.Printf("kube-agentic-networking %s controller against the webhook, %d scenarios: %d of %d XAccessPolicy verdicts agree\n", *version, *n, agree, judged)
	for _, d := range disagreements {
		fmt.Println("  " + d)
	}
	if len(disagreements) > 0 {
		return 1
	}
	return 0
}

// tail is the last lines of a log.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// verdict is "Accepted", the reason the controller refused the policy for, or "" before it
// judged it.
func verdict(u unstructured.Unstructured) string {
	ancestors, _, _ := unstructured.NestedSlice(u.Object, "status", "ancestors")
	got := ""
	for _, a := range ancestors {
		conds, _, _ := unstructured.NestedSlice(a.(map[string]any), "conditions")
		for _, c := range conds {
			cm := c.(map[string]any)
			if cm["type"] != "Accepted" {
				continue
			}
			if cm["status"] != "True" {
				return fmt.Sprint(cm["reason"])
			}
			got = "Accepted"
		}
	}
	return got
}

func check2(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "oracle-kan: "+msg)
	os.Exit(2)
}
