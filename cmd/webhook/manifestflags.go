package main

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/policyattachment/webhook/pkg/manifests"
)

// manifestFlags are kubectl's -f, -R and -k: where a command's manifests come from.
type manifestFlags struct {
	paths     []string
	recursive bool
	kustomize string
}

func (m *manifestFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringArrayVarP(&m.paths, "filename", "f", nil, what+": a file or a folder's files (repeatable; \"-\" reads standard input)")
	fs.BoolVarP(&m.recursive, "recursive", "R", false, "read the subfolders of the folders given with -f too")
	fs.StringVarP(&m.kustomize, "kustomize", "k", "", "a kustomization's `DIR` instead of -f: what it renders, as kubectl apply -k would apply it")
}

// given reports whether manifests were named at all.
func (m *manifestFlags) given() bool { return len(m.paths) > 0 || m.kustomize != "" }

// read returns the documents of -f or -k, in order.
func (m *manifestFlags) read(stdin io.Reader) ([]manifests.Document, error) {
	if len(m.paths) > 0 && m.kustomize != "" {
		return nil, errors.New("give -f or -k, not both (as kubectl)")
	}
	if m.kustomize != "" {
		return manifests.Kustomize(m.kustomize)
	}
	if len(m.paths) == 0 {
		return nil, errors.New("no input: pass -f with a file or folder (repeatable), -f - for standard input, or -k with a kustomization folder")
	}
	return manifests.Read(m.paths, stdin, manifests.Options{Recursive: m.recursive})
}
