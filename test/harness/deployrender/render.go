// Package deployrender renders what deploy/ ships, the way users' tools do: a kustomization
// with the kustomize library (`kubectl apply -k`), the Helm chart with Helm's own loader and
// template engine (`helm install`). Tests compare the two and send both to an API server.
package deployrender

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/manifests"
)

// KubeVersion is the Kubernetes version charts are rendered for (the chart's kubeVersion
// must admit it).
const KubeVersion = "v1.34.0"

// Kustomize renders the kustomization in dir, as `kubectl kustomize dir` does.
func Kustomize(dir string) ([]*unstructured.Unstructured, error) {
	docs, err := manifests.Kustomize(dir)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		objs = append(objs, &unstructured.Unstructured{Object: d.Object})
	}
	return objs, nil
}

// Chart is a rendered chart: the objects `helm install` creates, and its hooks apart (Helm
// creates those only at the hook's event).
type Chart struct {
	Objects []*unstructured.Unstructured
	Hooks   []*unstructured.Unstructured
}

// Helm renders the chart in dir as release name in namespace with values over the chart's
// defaults, as `helm template` does.
func Helm(dir, name, namespace string, values map[string]any) (*Chart, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	if v := chrt.Metadata.KubeVersion; v != "" && !chartutil.IsCompatibleRange(v, KubeVersion) {
		return nil, fmt.Errorf("chart %s needs Kubernetes %s, not %s", chrt.Name(), v, KubeVersion)
	}
	kube, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kube
	vals, err := chartutil.ToRenderValues(chrt, values, chartutil.ReleaseOptions{
		Name: name, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, err
	}
	rendered := &Chart{}
	for _, file := range slices.Sorted(maps.Keys(files)) {
		if path.Ext(file) != ".yaml" || strings.HasPrefix(path.Base(file), "_") {
			continue // NOTES.txt, helpers
		}
		for _, doc := range releaseutil.SplitManifests(files[file]) {
			objs, err := Decode([]byte(doc))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			for _, o := range objs {
				if _, hook := o.GetAnnotations()["helm.sh/hook"]; hook {
					rendered.Hooks = append(rendered.Hooks, o)
				} else {
					rendered.Objects = append(rendered.Objects, o)
				}
			}
		}
	}
	return rendered, nil
}

// Decode reads a YAML stream into objects, skipping empty documents.
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}
