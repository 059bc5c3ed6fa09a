package manifests

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Kustomize renders the kustomization in dir with the kustomize library `kubectl apply -k`
// uses (its default options: files only from under dir, no plugins) and decodes what it
// renders, each object a document of source dir.
func Kustomize(dir string) ([]Document, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, inputErrorf("-k %s: %v", dir, err)
	}
	rendered, err := resources.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("-k %s: %w", dir, err)
	}
	return Decode(dir, rendered)
}
