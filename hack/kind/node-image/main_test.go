package main

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// kubeadmPatch is what hack/kind/cluster.yaml tells kubeadm about images.
type kubeadmPatch struct {
	ImageRepository string `json:"imageRepository"`
	Etcd            struct {
		Local struct {
			ImageTag string `json:"imageTag"`
		} `json:"local"`
	} `json:"etcd"`
	DNS struct {
		Disabled bool `json:"disabled"`
	} `json:"dns"`
}

// TestImagesAreWhatTheClusterAsksFor keeps the three files that name the preloaded images
// in step: every image kubeadm v1.34 asks for under hack/kind/cluster.yaml's
// imageRepository (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy,
// etcd at its tag; pause is containerd's sandbox image) and the one the CNI manifest runs,
// and nothing else. No CoreDNS image is made, so the cluster's DNS must be off.
func TestImagesAreWhatTheClusterAsksFor(t *testing.T) {
	raw, err := os.ReadFile("../cluster.yaml")
	require.NoError(t, err)
	var cluster struct {
		KubeadmConfigPatches []string `json:"kubeadmConfigPatches"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cluster))
	require.Len(t, cluster.KubeadmConfigPatches, 1)
	var patch kubeadmPatch
	require.NoError(t, yaml.Unmarshal([]byte(cluster.KubeadmConfigPatches[0]), &patch))
	assert.True(t, patch.DNS.Disabled, "no CoreDNS image is preloaded")

	cni, err := os.ReadFile("../cni/default-cni.yaml")
	require.NoError(t, err)
	require.Contains(t, string(cni), "image: "+defaultRepo+"/"+cniImage+"\n")

	repo := patch.ImageRepository
	want := []string{
		repo + "/etcd:" + patch.Etcd.Local.ImageTag,
		repo + "/" + cniImage,
		repo + "/kube-apiserver:" + defaultK8s,
		repo + "/kube-controller-manager:" + defaultK8s,
		repo + "/kube-proxy:" + defaultK8s,
		repo + "/kube-scheduler:" + defaultK8s,
		repo + "/pause:" + defaultPauseTag,
	}
	var got []string
	for ref := range imageSpecs(defaultRepo, defaultK8s, defaultEtcdTag, defaultPauseTag, "/bin", "/pause", "/root.tar", "/cni") {
		got = append(got, ref)
	}
	sort.Strings(got)
	assert.Equal(t, want, got)

	// The versions hack/kind/node-image.sh passes are these defaults.
	assert.Equal(t, map[string]string{"K8S_VERSION": strings.TrimPrefix(defaultK8s, "v"), "ETCD_VERSION": defaultEtcdTag},
		shellDefaults(t, "../../lib/versions.sh", "K8S_VERSION", "ETCD_VERSION"))
	assert.Equal(t, map[string]string{"PAUSE_TAG": defaultPauseTag}, shellDefaults(t, "../node-image.sh", "PAUSE_TAG"))
}

// shellDefaults reads the values a shell script gives names, as NAME="${NAME:-VALUE}" or
// NAME=VALUE, by name; a name it does not set is missing.
func shellDefaults(t *testing.T, file string, names ...string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	got := map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		for _, name := range names {
			v, ok := strings.CutPrefix(l, name+"=")
			if !ok {
				continue
			}
			if d, ok := strings.CutPrefix(v, `"${`+name+`:-`); ok {
				v = strings.TrimSuffix(d, `}"`)
			}
			got[name] = v
		}
	}
	return got
}

func TestNodeImageIsKindsBase(t *testing.T) {
	root := t.TempDir() + "/root.tar"
	require.NoError(t, os.WriteFile(root, make([]byte, 1024), 0o644)) // an empty tar archive
	img, err := nodeImage(root)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux/amd64", cfg.OS+"/"+cfg.Architecture)
	assert.Equal(t, []string{"/usr/local/bin/entrypoint", "/sbin/init"}, cfg.Config.Entrypoint)
	assert.Empty(t, cfg.Config.Cmd)
	assert.Equal(t, "SIGRTMIN+3", cfg.Config.StopSignal)
	assert.Equal(t, []string{defaultPath, "container=docker"}, cfg.Config.Env)
	layers, err := img.Layers()
	require.NoError(t, err)
	assert.Len(t, layers, 1)
}
