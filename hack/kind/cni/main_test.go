package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestConflist(t *testing.T) {
	tests := map[string]struct {
		podCIDR string
		want    string
		wantErr string
	}{
		"kind's first node range": {
			podCIDR: "10.244.0.0/24",
			want: `{
  "cniVersion": "0.4.0",
  "name": "policyattachment",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [
          [
            {
              "subnet": "10.244.0.0/24"
            }
          ]
        ],
        "routes": [
          {
            "dst": "0.0.0.0/0"
          }
        ]
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}
`,
		},
		"host bits set":  {podCIDR: "10.244.0.1/24", wantErr: `podCIDR "10.244.0.1/24" has host bits set`},
		"IPv6":           {podCIDR: "fd00:10:244::/64", wantErr: `podCIDR "fd00:10:244::/64" is not IPv4`},
		"not a CIDR":     {podCIDR: "10.244.0.0", wantErr: `podCIDR "10.244.0.0": netip.ParsePrefix("10.244.0.0"): no '/'`},
		"empty is wrong": {podCIDR: "", wantErr: `podCIDR "": netip.ParsePrefix(""): no '/'`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := conflist(tc.podCIDR)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestPickIPv4(t *testing.T) {
	tests := map[string]struct {
		podCIDR  string
		podCIDRs []string
		want     string
		wantErr  string
	}{
		"podCIDR only":            {podCIDR: "10.244.0.0/24", want: "10.244.0.0/24"},
		"podCIDRs, one":           {podCIDR: "10.244.0.0/24", podCIDRs: []string{"10.244.0.0/24"}, want: "10.244.0.0/24"},
		"dual-stack, IPv4 first":  {podCIDR: "10.244.1.0/24", podCIDRs: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, want: "10.244.1.0/24"},
		"dual-stack, IPv6 first":  {podCIDR: "fd00:10:244:1::/64", podCIDRs: []string{"fd00:10:244:1::/64", "10.244.1.0/24"}, want: "10.244.1.0/24"},
		"not set yet":             {wantErr: "spec.podCIDR is not set yet"},
		"not set yet, empty list": {podCIDRs: []string{}, wantErr: "spec.podCIDR is not set yet"},
		"IPv6 only":               {podCIDR: "fd00:10:244::/64", wantErr: "no IPv4 podCIDR among [fd00:10:244::/64]: IPv6 is not configured"},
		"IPv6 only, in podCIDRs":  {podCIDR: "fd00:10:244::/64", podCIDRs: []string{"fd00:10:244::/64"}, wantErr: "no IPv4 podCIDR among [fd00:10:244::/64]: IPv6 is not configured"},
		"malformed":               {podCIDR: "10.244.0.0/33", wantErr: `podCIDR "10.244.0.0/33": netip.ParsePrefix("10.244.0.0/33"): prefix length out of range`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := pickIPv4(tc.podCIDR, tc.podCIDRs)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// The wait tells the normal case from a failure by this value.
	_, err := pickIPv4("", nil)
	assert.True(t, errors.Is(err, errNoPodCIDR))
}

func TestAPIBase(t *testing.T) {
	tests := map[string]struct {
		env     map[string]string
		want    string
		wantErr string
	}{
		"kind's endpoint": {
			env:  map[string]string{"CONTROL_PLANE_ENDPOINT": "kind-control-plane:6443", "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			want: "https://kind-control-plane:6443",
		},
		"the kubernetes Service": {
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			want: "https://10.96.0.1:443",
		},
		"the kubernetes Service, IPv6": {
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "fd00:10:96::1", "KUBERNETES_SERVICE_PORT": "443"},
			want: "https://[fd00:10:96::1]:443",
		},
		"nothing": {
			env:     map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1"},
			wantErr: "neither CONTROL_PLANE_ENDPOINT nor KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := apiBase(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// fakeAPIServer serves Nodes the way the API server does, to the bearer token "t0ken" only,
// and gives an api client of it.
func fakeAPIServer(t *testing.T, nodes map[string]string) api {
	t.Helper()
	srv := newFakeAPIServer(t, func() map[string]string { return nodes })
	return api{base: srv.URL, client: clientTrusting(t, srv.Certificate().Raw), token: func() (string, error) { return "t0ken", nil }}
}

// newFakeAPIServer is fakeAPIServer's server, with the Nodes as they are at each request.
func newFakeAPIServer(t *testing.T, nodesNow func() map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nodes := nodesNow()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		if r.URL.Path == "/api/v1/nodes" {
			if r.URL.Query().Get("limit") != "2" {
				t.Errorf("list without limit=2: %s", r.URL)
			}
			items := []string{}
			for _, n := range nodes {
				items = append(items, n)
			}
			w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[` + strings.Join(items, ",") + `]}`))
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/nodes/")
		if n, found := nodes[name]; ok && found {
			w.Write([]byte(n))
			return
		}
		if ok && name == "garbled" {
			w.Write([]byte(`{"kind":`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nodes \"` + name + `\" not found","reason":"NotFound","details":{"name":"` + name + `","kind":"nodes"},"code":404}`))
	}))
	// The untrusted-server case's failed handshakes are expected, not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// clientTrusting is inClusterClient with a CA file holding the DER certificate ca, as the
// service account volume holds the cluster's CA.
func clientTrusting(t *testing.T, ca []byte) *http.Client {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca}), 0o600))
	client, err := inClusterClient(file)
	require.NoError(t, err)
	return client
}

// selfSigned is a CA certificate other than the one every httptest server shares.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "another cluster's CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return der
}

func TestInClusterClientNoPEM(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(file, []byte("not a certificate\n"), 0o600))
	_, err := inClusterClient(file)
	require.EqualError(t, err, file+" holds no PEM certificate")
}

func TestNodeSpec(t *testing.T) {
	a := fakeAPIServer(t, map[string]string{
		"kind-control-plane": `{"kind":"Node","apiVersion":"v1","metadata":{"name":"kind-control-plane"},"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"],"providerID":"kind://docker/kind/kind-control-plane"},"status":{"addresses":[{"type":"InternalIP","address":"172.18.0.2"}]}}`,
		"dual":               `{"kind":"Node","apiVersion":"v1","metadata":{"name":"dual"},"spec":{"podCIDR":"fd00:10:244::/64","podCIDRs":["fd00:10:244::/64","10.244.0.0/24"]}}`,
		"new":                `{"kind":"Node","apiVersion":"v1","metadata":{"name":"new"},"spec":{"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]}}`,
	})
	tests := map[string]struct {
		node     string
		want     nodeSpec
		wantErr  string
		wantPick string // pickIPv4's answer, or its error after "error: "
	}{
		"assigned":        {node: "kind-control-plane", want: nodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"}}, wantPick: "10.244.0.0/24"},
		"dual-stack":      {node: "dual", want: nodeSpec{PodCIDR: "fd00:10:244::/64", PodCIDRs: []string{"fd00:10:244::/64", "10.244.0.0/24"}}, wantPick: "10.244.0.0/24"},
		"not yet set":     {node: "new", want: nodeSpec{}, wantPick: "error: spec.podCIDR is not set yet"},
		"no such node":    {node: "gone", wantErr: `GET /api/v1/nodes/gone: 404 Not Found: nodes "gone" not found`},
		"not JSON":        {node: "garbled", wantErr: "GET /api/v1/nodes/garbled: decoding the answer: unexpected end of JSON input"},
		"escaped in path": {node: "a/b", wantErr: `GET /api/v1/nodes/a%2Fb: 404 Not Found: nodes "a/b" not found`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := a.nodeSpec(context.Background(), tc.node)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			pick, err := pickIPv4(got.PodCIDR, got.PodCIDRs)
			if err != nil {
				pick = "error: " + err.Error()
			}
			assert.Equal(t, tc.wantPick, pick)
		})
	}

	t.Run("wrong token", func(t *testing.T) {
		bad := a
		bad.token = func() (string, error) { return "stale", nil }
		_, err := bad.nodeSpec(context.Background(), "kind-control-plane")
		require.EqualError(t, err, "GET /api/v1/nodes/kind-control-plane: 401 Unauthorized: Unauthorized")
	})
	t.Run("unreadable token", func(t *testing.T) {
		bad := a
		bad.token = tokenFile(filepath.Join(t.TempDir(), "token"))
		_, err := bad.nodeSpec(context.Background(), "kind-control-plane")
		require.ErrorContains(t, err, "reading the service account token: open ")
	})
	t.Run("untrusted server", func(t *testing.T) {
		bad := a
		bad.client = clientTrusting(t, selfSigned(t))
		_, err := bad.nodeSpec(context.Background(), "kind-control-plane")
		require.ErrorContains(t, err, "tls: failed to verify certificate: x509: certificate signed by unknown authority")
	})
}

func TestNodeCount(t *testing.T) {
	one := `{"metadata":{"name":"kind-control-plane"}}`
	tests := map[string]struct {
		nodes map[string]string
		want  int
	}{
		"one node":    {nodes: map[string]string{"kind-control-plane": one}, want: 1},
		"three nodes": {nodes: map[string]string{"kind-control-plane": one, "kind-worker": `{}`, "kind-worker2": `{}`}, want: 3},
		"none":        {nodes: map[string]string{}, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := fakeAPIServer(t, tc.nodes).nodeCount(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte("first\n"), 0o600))
	token := tokenFile(path)
	got, err := token()
	require.NoError(t, err)
	assert.Equal(t, "first", got)
	// The kubelet's rotation is seen at the next request.
	require.NoError(t, os.WriteFile(path, []byte("second"), 0o600))
	got, err = token()
	require.NoError(t, err)
	assert.Equal(t, "second", got)
}

func TestWriteIfChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "net.d")
	path := filepath.Join(dir, confName)
	v1, v2 := []byte("one\n"), []byte("two\n")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

	// onlyFile checks the folder holds path alone, with want: no temporary file is left.
	onlyFile := func(t *testing.T, want []byte) os.FileInfo {
		t.Helper()
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{confName}, names)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
		return fi
	}

	steps := []struct {
		name        string
		before      func(t *testing.T)
		content     []byte
		wantChanged bool
		wantSame    bool // the file is the one before, untouched
		// wantRenamed: a new file replaced the one there, which a write in place would not
		// do. (After a removal the new file may get the freed inode, so it is not asked.)
		wantRenamed bool
	}{
		{name: "no folder yet", content: v1, wantChanged: true},
		{name: "identical content", content: v1, wantChanged: false, wantSame: true},
		{name: "new content", content: v2, wantChanged: true, wantRenamed: true},
		{name: "removed", before: func(t *testing.T) { require.NoError(t, os.Remove(path)) }, content: v2, wantChanged: true},
		{name: "edited by someone", before: func(t *testing.T) { require.NoError(t, os.WriteFile(path, []byte("{}"), 0o644)) }, content: v2, wantChanged: true, wantRenamed: true},
		{name: "identical again", content: v2, wantChanged: false, wantSame: true},
	}
	var prev os.FileInfo
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if prev != nil {
				require.NoError(t, os.Chtimes(path, old, old))
				var err error
				prev, err = os.Stat(path)
				require.NoError(t, err)
			}
			if s.before != nil {
				s.before(t)
			}
			changed, err := writeIfChanged(path, s.content)
			require.NoError(t, err)
			assert.Equal(t, s.wantChanged, changed)
			fi := onlyFile(t, s.content)
			if s.wantSame {
				assert.True(t, os.SameFile(prev, fi), "the file was replaced")
				assert.Equal(t, old, fi.ModTime().UTC(), "the file was written")
			}
			if s.wantRenamed {
				assert.False(t, os.SameFile(prev, fi), "the file was not replaced by a rename")
			}
			prev = fi
		})
	}
}

func TestBridgeNetfilterWarning(t *testing.T) {
	dir := t.TempDir()
	on, off := filepath.Join(dir, "on"), filepath.Join(dir, "off")
	require.NoError(t, os.WriteFile(on, []byte("1\n"), 0o644))
	require.NoError(t, os.WriteFile(off, []byte("0\n"), 0o644))
	missing := filepath.Join(dir, "missing")
	tests := map[string]struct {
		sysctl string
		want   string
	}{
		"on":         {sysctl: on, want: ""},
		"off":        {sysctl: off, want: "WARNING: " + off + " is 0, not 1: Pods reaching Services backed by Pods on this node get no answers"},
		"not loaded": {sysctl: missing, want: "WARNING: br_netfilter is not loaded (no " + missing + "): Pods reaching Services backed by Pods on this node get no answers; run `modprobe br_netfilter` on the host"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, bridgeNetfilterWarning(tc.sysctl))
		})
	}
}

// TestManifest reads default-cni.yaml the way kind v0.33.0 does (installcni.Execute): the
// template with .PodSubnet, then a JSON patch appending CONTROL_PLANE_ENDPOINT to the
// DaemonSet's containers[0].env, then `kubectl create`.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile("default-cni.yaml")
	require.NoError(t, err)
	for _, phrase := range []string{"would you kindly template this file", "would you kindly patch this file"} {
		assert.Contains(t, string(raw), phrase)
	}
	tmpl, err := template.New("cni-manifest").Parse(string(raw))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, tmpl.Execute(&out, &struct{ PodSubnet string }{PodSubnet: "10.244.0.0/16"}))

	docs := strings.Split(out.String(), "\n---\n")
	require.Len(t, docs, 4)
	var (
		sa  corev1.ServiceAccount
		cr  rbacv1.ClusterRole
		crb rbacv1.ClusterRoleBinding
		ds  appsv1.DaemonSet
	)
	for i, obj := range []any{&sa, &cr, &crb, &ds} {
		require.NoError(t, yaml.UnmarshalStrict([]byte(docs[i]), obj), "document %d", i)
	}

	type id struct{ Kind, Namespace, Name string }
	assert.Equal(t,
		[]id{{"ServiceAccount", "kube-system", "policyattachment-cni"}, {"ClusterRole", "", "policyattachment-cni"}, {"ClusterRoleBinding", "", "policyattachment-cni"}, {"DaemonSet", "kube-system", "policyattachment-cni"}},
		[]id{{sa.Kind, sa.Namespace, sa.Name}, {cr.Kind, cr.Namespace, cr.Name}, {crb.Kind, crb.Namespace, crb.Name}, {ds.Kind, ds.Namespace, ds.Name}})
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}}, cr.Rules)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cr.Name}, crb.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}, crb.Subjects)

	labels := map[string]string{"app": "policyattachment-cni"}
	assert.Equal(t, labels, ds.Labels)
	assert.Equal(t, &metav1.LabelSelector{MatchLabels: labels}, ds.Spec.Selector)
	assert.Equal(t, labels, ds.Spec.Template.Labels)

	assert.Equal(t, corev1.PodSpec{
		HostNetwork:        true,
		PriorityClassName:  "system-node-critical",
		Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		ServiceAccountName: sa.Name,
		Containers: []corev1.Container{{
			Name:            "cni",
			Image:           "policyattachment/kind-cni:v1",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/kind-cni"},
			Env: []corev1.EnvVar{
				{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				{Name: "POD_SUBNET", Value: "10.244.0.0/16"},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
			},
			SecurityContext: &corev1.SecurityContext{
				RunAsUser:                new(int64(0)),
				AllowPrivilegeEscalation: new(false),
				ReadOnlyRootFilesystem:   new(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "cni-conf", MountPath: "/etc/cni/net.d"}},
		}},
		Volumes: []corev1.Volume{{Name: "cni-conf", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/etc/cni/net.d", Type: new(corev1.HostPathDirectoryOrCreate),
		}}}},
	}, ds.Spec.Template.Spec)
	// kind's patch is an RFC 6902 add at containers/0/env/-, which fails on a missing list.
	assert.NotNil(t, ds.Spec.Template.Spec.Containers[0].Env)
}

// captureLog sends the log, without timestamps, to the buffer it returns until t ends.
func captureLog(t *testing.T) *lockedBuffer {
	t.Helper()
	var buf lockedBuffer
	w, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(&buf)
	log.SetFlags(0)
	log.SetPrefix("")
	t.Cleanup(func() {
		log.SetOutput(w)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	})
	return &buf
}

// lockedBuffer is read by a test while run logs into it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the log's lines but those about br_netfilter, which depend on the machine.
func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(b.buf.String(), "\n"), "\n") {
		if l != "" && !strings.Contains(l, "br_netfilter") && !strings.Contains(l, "bridge-nf-call-iptables") {
			out = append(out, l)
		}
	}
	return out
}

func TestWaitForPodCIDR(t *testing.T) {
	var gets atomic.Int32
	srv := newFakeAPIServer(t, func() map[string]string {
		// The node controller allocates the range between the second and third GET.
		if gets.Add(1) <= 2 {
			return map[string]string{"kind-control-plane": `{"spec":{}}`}
		}
		return map[string]string{"kind-control-plane": `{"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24","fd00:10:244::/64"]}}`}
	})
	a := api{base: srv.URL, client: clientTrusting(t, srv.Certificate().Raw), token: func() (string, error) { return "t0ken", nil }}

	t.Run("set at the third GET", func(t *testing.T) {
		logs := captureLog(t)
		got, err := waitForPodCIDR(context.Background(), a, "kind-control-plane", time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, "10.244.0.0/24", got)
		assert.Equal(t, int32(3), gets.Load())
		assert.Equal(t, []string{
			"waiting for node kind-control-plane's podCIDR (attempt 1): spec.podCIDR is not set yet",
			"waiting for node kind-control-plane's podCIDR (attempt 2): spec.podCIDR is not set yet",
			"node kind-control-plane also has podCIDR fd00:10:244::/64: IPv6 is not configured",
		}, logs.lines())
	})
	t.Run("never set: only the context ends the wait", func(t *testing.T) {
		logs := captureLog(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := waitForPodCIDR(ctx, a, "kind-worker", time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		lines := logs.lines()
		require.NotEmpty(t, lines)
		assert.Equal(t, `waiting for node kind-worker's podCIDR (attempt 1): GET /api/v1/nodes/kind-worker: 404 Not Found: nodes "kind-worker" not found`, lines[0])
	})
}

// TestRun runs the daemon against a fake API server of two nodes until it has written the
// conflist and warned about the second node, then stops it as SIGTERM would.
func TestRun(t *testing.T) {
	want, err := conflist("10.244.0.0/24")
	require.NoError(t, err)
	srv := newFakeAPIServer(t, func() map[string]string {
		return map[string]string{
			"kind-control-plane": `{"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"]}}`,
			"kind-worker":        `{"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"]}}`,
		}
	})
	tokenDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tokenDir, "token"), []byte("t0ken"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(tokenDir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	endpoint := strings.TrimPrefix(srv.URL, "https://")
	const warning = "WARNING: the cluster has more than one node; this CNI adds no routes between nodes, so Pods on different nodes cannot reach each other"

	tests := map[string]struct {
		env      map[string]string
		existing []byte // the conflist there before, if any
		wantLog  func(path string) []string
		wantErr  string
	}{
		"first start": {
			env: map[string]string{"NODE_NAME": "kind-control-plane", "CONTROL_PLANE_ENDPOINT": endpoint, "POD_SUBNET": "10.244.0.0/16"},
			wantLog: func(path string) []string {
				return []string{
					`node kind-control-plane, API server ` + srv.URL + `, conflist ` + path + `, cluster Pod subnet "10.244.0.0/16"`,
					"wrote " + path + " for podCIDR 10.244.0.0/24",
					warning,
					"stopping",
				}
			},
		},
		"restart, the file in place": {
			env:      map[string]string{"NODE_NAME": "kind-control-plane", "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": strings.TrimPrefix(endpoint, "127.0.0.1:")},
			existing: want,
			wantLog: func(path string) []string {
				return []string{
					`node kind-control-plane, API server ` + srv.URL + `, conflist ` + path + `, cluster Pod subnet ""`,
					path + " is already written for podCIDR 10.244.0.0/24",
					warning,
					"stopping",
				}
			},
		},
		"no NODE_NAME": {
			env:     map[string]string{"CONTROL_PLANE_ENDPOINT": endpoint},
			wantErr: "NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := captureLog(t)
			confDir := filepath.Join(t.TempDir(), "net.d")
			path := filepath.Join(confDir, confName)
			if tc.existing != nil {
				require.NoError(t, os.MkdirAll(confDir, 0o755))
				require.NoError(t, os.WriteFile(path, tc.existing, 0o644))
			}
			env := map[string]string{"CNI_CONF_DIR": confDir}
			for k, v := range tc.env {
				env[k] = v
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- run(ctx, func(k string) string { return env[k] }, tokenDir) }()
			if tc.wantErr != "" {
				require.EqualError(t, <-done, tc.wantErr)
				return
			}

			// Nothing is logged after the warning until the context ends.
			require.Eventually(t, func() bool { return slices.Contains(logs.lines(), warning) }, 10*time.Second, 10*time.Millisecond)
			cancel()
			require.NoError(t, <-done)
			assert.Equal(t, tc.wantLog(path), logs.lines())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}
