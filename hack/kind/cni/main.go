// Command kind-cni is the Pod network of a one-node kind cluster made from this repository's
// own node image (issue 31), where kind's default CNI daemon, kindnetd, cannot be pulled. It
// runs as a DaemonSet on the host network (default-cni.yaml, which kind applies from
// /kind/manifests/default-cni.yaml in the node image), waits until the API server has given
// its node a spec.podCIDR, and writes $CNI_CONF_DIR/10-policyattachment.conflist for the
// reference plugins in the node's /opt/cni/bin (Debian bookworm's containernetworking-plugins
// 1.1.1): a bridge, cni0, handing out addresses of the podCIDR (host-local) and masquerading
// what leaves it, then portmap for hostPorts. Until SIGTERM it checks the file every 30 s and
// writes it again if it was removed or changed.
//
// It serves one-node clusters only: a Pod on another node is reached through a route to that
// node's podCIDR via that node, which kindnetd adds on every node and this does not. When the
// cluster has more than one node it logs a warning once and carries on. It configures IPv4
// only: of a dual-stack node's podCIDRs it uses the IPv4 one and logs that IPv6 is not
// configured. A bridge needs br_netfilter for Pods to reach Services backed by Pods on the same
// bridge (CoreDNS among them); the daemon cannot load it, so it warns at start when it is off.
//
// It imports only the standard library, no client-go, so that its image is one small static
// binary. It reaches the API server at CONTROL_PLANE_ENDPOINT (host:port, which kind adds to
// the DaemonSet so that the daemon need not wait for kube-proxy to serve the kubernetes
// Service), else at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, with the Pod's service
// account token and CA.
//
// Environment: NODE_NAME (required, from the downward API), CONTROL_PLANE_ENDPOINT,
// CNI_CONF_DIR (default /etc/cni/net.d) and POD_SUBNET (the cluster's Pod subnet, only
// logged).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	confName        = "10-policyattachment.conflist"
	saDir           = "/var/run/secrets/kubernetes.io/serviceaccount"
	retryInterval   = 2 * time.Second
	recheckInterval = 30 * time.Second
	// bridgeNFSysctl exists only while br_netfilter is loaded; see bridgeNetfilterWarning.
	bridgeNFSysctl = "/proc/sys/net/bridge/bridge-nf-call-iptables"
)

// errNoPodCIDR is the wait's normal reason: the node controller has not allocated one yet.
var errNoPodCIDR = errors.New("spec.podCIDR is not set yet")

func main() {
	log.SetFlags(log.LstdFlags | log.LUTC)
	log.SetPrefix("kind-cni: ")
	// SIGTERM is the kubelet stopping the Pod: the conflist stays, and the exit is a clean one.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Getenv, saDir); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// run waits for the node's podCIDR, writes the conflist and keeps it in place until ctx ends.
// tokenDir holds the service account's token and ca.crt.
func run(ctx context.Context, getenv func(string) string, tokenDir string) error {
	nodeName := getenv("NODE_NAME")
	if nodeName == "" {
		return errors.New("NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)")
	}
	base, err := apiBase(getenv)
	if err != nil {
		return err
	}
	client, err := inClusterClient(filepath.Join(tokenDir, "ca.crt"))
	if err != nil {
		return err
	}
	a := api{base: base, client: client, token: tokenFile(filepath.Join(tokenDir, "token"))}
	confDir := getenv("CNI_CONF_DIR")
	if confDir == "" {
		confDir = "/etc/cni/net.d"
	}
	path := filepath.Join(confDir, confName)
	log.Printf("node %s, API server %s, conflist %s, cluster Pod subnet %q", nodeName, base, path, getenv("POD_SUBNET"))
	if w := bridgeNetfilterWarning(bridgeNFSysctl); w != "" {
		log.Print(w)
	}

	podCIDR, err := waitForPodCIDR(ctx, a, nodeName, retryInterval)
	if err != nil {
		log.Print("stopping") // only ctx ends the wait: SIGTERM while waiting
		return nil
	}
	content, err := conflist(podCIDR)
	if err != nil {
		return err
	}
	if changed, err := writeIfChanged(path, content); err != nil {
		log.Printf("writing %s: %v (trying again in %s)", path, err, recheckInterval)
	} else if changed {
		log.Printf("wrote %s for podCIDR %s", path, podCIDR)
	} else {
		log.Printf("%s is already written for podCIDR %s", path, podCIDR)
	}

	ticker := time.NewTicker(recheckInterval)
	defer ticker.Stop()
	warned := false
	for {
		// Workers join after kind installs the CNI, so the count is asked again until it
		// has warned.
		if !warned {
			if n, err := a.nodeCount(ctx); err != nil {
				log.Printf("listing nodes: %v", err)
			} else if n > 1 {
				log.Printf("WARNING: the cluster has more than one node; this CNI adds no routes between nodes, so Pods on different nodes cannot reach each other")
				warned = true
			}
		}
		select {
		case <-ctx.Done():
			log.Print("stopping")
			return nil
		case <-ticker.C:
		}
		if changed, err := writeIfChanged(path, content); err != nil {
			log.Printf("writing %s: %v", path, err)
		} else if changed {
			log.Printf("wrote %s again: it was missing or changed", path)
		}
	}
}

// waitForPodCIDR asks for the node every interval until it has an IPv4 podCIDR; it gives up
// only when ctx ends.
func waitForPodCIDR(ctx context.Context, a api, nodeName string, every time.Duration) (string, error) {
	for attempt := 1; ; attempt++ {
		spec, err := a.nodeSpec(ctx, nodeName)
		if err == nil {
			var v4 string
			if v4, err = pickIPv4(spec.PodCIDR, spec.PodCIDRs); err == nil {
				for _, c := range spec.PodCIDRs {
					if c != v4 {
						log.Printf("node %s also has podCIDR %s: IPv6 is not configured", nodeName, c)
					}
				}
				return v4, nil
			}
		}
		log.Printf("waiting for node %s's podCIDR (attempt %d): %v", nodeName, attempt, err)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(every):
		}
	}
}

// apiBase is the API server's URL: kind's CONTROL_PLANE_ENDPOINT, else the kubernetes
// Service's address, which needs kube-proxy.
func apiBase(getenv func(string) string) (string, error) {
	if ep := getenv("CONTROL_PLANE_ENDPOINT"); ep != "" {
		return "https://" + ep, nil
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return "", errors.New("neither CONTROL_PLANE_ENDPOINT nor KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set")
	}
	return "https://" + net.JoinHostPort(host, port), nil
}

// inClusterClient trusts only the cluster's CA, the one the service account volume carries.
func inClusterClient(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// tokenFile reads the token at each request: the kubelet rotates the projected token.
func tokenFile(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		return strings.TrimSpace(string(b)), err
	}
}

// api is the little of the Kubernetes API this daemon asks.
type api struct {
	base   string
	client *http.Client
	token  func() (string, error)
}

// nodeSpec is the part of a Node that holds its Pod ranges.
type nodeSpec struct {
	PodCIDR  string   `json:"podCIDR"`
	PodCIDRs []string `json:"podCIDRs"`
}

// nodeSpec GETs /api/v1/nodes/NAME; a node without a podCIDR yet is no error here.
func (a api) nodeSpec(ctx context.Context, name string) (nodeSpec, error) {
	var n struct {
		Spec nodeSpec `json:"spec"`
	}
	err := a.get(ctx, "/api/v1/nodes/"+url.PathEscape(name), &n)
	return n.Spec, err
}

// nodeCount tells whether the cluster has more than one node: limit=2 is enough to know.
func (a api) nodeCount(ctx context.Context) (int, error) {
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	err := a.get(ctx, "/api/v1/nodes?limit=2", &l)
	return len(l.Items), err
}

// get decodes the JSON answer to GET path into into; a status other than 200 is an error
// carrying the API server's message, so that the log says why (RBAC, a wrong node name).
func (a api) get(ctx context.Context, path string, into any) error {
	token, err := a.token()
	if err != nil {
		return fmt.Errorf("reading the service account token: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("GET %s: reading the answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var status struct {
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &status) == nil && status.Message != "" {
			msg = status.Message
		}
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: decoding the answer: %w", path, err)
	}
	return nil
}

// pickIPv4 returns the node's first IPv4 range, as written: spec.podCIDRs when set (dual-stack
// nodes have two, one of each family), else spec.podCIDR. It is errNoPodCIDR when neither is
// set yet.
func pickIPv4(podCIDR string, podCIDRs []string) (string, error) {
	cidrs := podCIDRs
	if len(cidrs) == 0 && podCIDR != "" {
		cidrs = []string{podCIDR}
	}
	if len(cidrs) == 0 {
		return "", errNoPodCIDR
	}
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return "", fmt.Errorf("podCIDR %q: %w", c, err)
		}
		if p.Addr().Is4() {
			return c, nil
		}
	}
	return "", fmt.Errorf("no IPv4 podCIDR among %v: IPv6 is not configured", cidrs)
}

// The conflist's JSON, in the order written; the field names are those the plugins read.
type (
	netConfList struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}
	bridgeConf struct {
		Type        string   `json:"type"`
		Bridge      string   `json:"bridge"`
		IsGateway   bool     `json:"isGateway"`
		IPMasq      bool     `json:"ipMasq"`
		HairpinMode bool     `json:"hairpinMode"`
		IPAM        ipamConf `json:"ipam"`
	}
	ipamConf struct {
		Type   string        `json:"type"`
		Ranges [][]rangeConf `json:"ranges"`
		Routes []routeConf   `json:"routes"`
	}
	rangeConf struct {
		Subnet string `json:"subnet"`
	}
	routeConf struct {
		Dst string `json:"dst"`
	}
	portmapConf struct {
		Type         string          `json:"type"`
		Capabilities map[string]bool `json:"capabilities"`
	}
)

// conflist is the network configuration for an IPv4 podCIDR: Pods on the cni0 bridge, with
// the bridge as their default gateway, addresses from host-local (state in its default
// /var/lib/cni/networks), traffic leaving the range masqueraded, and hostPorts by portmap.
// cniVersion 0.4.0 is one that plugins 1.1.1 and containerd's libcni both speak.
func conflist(podCIDR string) ([]byte, error) {
	p, err := netip.ParsePrefix(podCIDR)
	if err != nil {
		return nil, fmt.Errorf("podCIDR %q: %w", podCIDR, err)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("podCIDR %q is not IPv4", podCIDR)
	}
	if p != p.Masked() {
		return nil, fmt.Errorf("podCIDR %q has host bits set", podCIDR)
	}
	b, err := json.MarshalIndent(netConfList{
		CNIVersion: "0.4.0",
		Name:       "policyattachment",
		Plugins: []any{
			bridgeConf{
				Type: "bridge", Bridge: "cni0", IsGateway: true, IPMasq: true, HairpinMode: true,
				IPAM: ipamConf{
					Type:   "host-local",
					Ranges: [][]rangeConf{{{Subnet: p.String()}}},
					Routes: []routeConf{{Dst: "0.0.0.0/0"}},
				},
			},
			portmapConf{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeIfChanged makes path hold content and tells whether it wrote. It writes a temporary file
// in the same folder and renames it over path, so that containerd, which watches the folder,
// never loads half a file; the temporary name ends in .tmp, an extension libcni does not load.
func writeIfChanged(path string, content []byte) (bool, error) {
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, content):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}

// bridgeNetfilterWarning says when br_netfilter is off, which this daemon cannot change (it
// drops every capability). Without it a Pod's packets to a Service whose endpoint is another
// Pod on cni0 are DNATed on the way in, but the reply crosses the bridge without meeting
// iptables, is not translated back and is dropped by the client, so in-cluster DNS fails.
// kindnetd's point-to-point links do not need it; a bridge does.
func bridgeNetfilterWarning(sysctl string) string {
	b, err := os.ReadFile(sysctl)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "WARNING: br_netfilter is not loaded (no " + sysctl + "): Pods reaching Services backed by Pods on this node get no answers; run `modprobe br_netfilter` on the host"
	case err != nil:
		return "cannot tell whether br_netfilter is on: " + err.Error()
	case strings.TrimSpace(string(b)) != "1":
		return "WARNING: " + sysctl + " is " + strings.TrimSpace(string(b)) + ", not 1: Pods reaching Services backed by Pods on this node get no answers"
	}
	return ""
}
