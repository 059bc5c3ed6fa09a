package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/crdvalidation"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
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

// state builds the state the manifests describe, as check.State would from read's
// documents; a document its CRD (among them) refuses is left out and said on notes. Files
// named with -f are read twice, one at a time (policy kinds and schemas from their CRDs
// first, then the objects), so a large folder costs the memory of its largest file and of
// its policies; standard input and -k are read at once.
func (m *manifestFlags) state(stdin io.Reader, table *kinds.KindTable, notes io.Writer, cmd string) (*check.StateBuilder, error) {
	s := check.NewStateBuilder(table)
	if m.kustomize != "" || len(m.paths) == 0 || slices.Contains(m.paths, "-") {
		docs, err := m.read(stdin)
		if err != nil {
			return nil, err
		}
		if err := s.Discover(docs); err != nil {
			return nil, err
		}
		s.Judge(noteRefused(notes, cmd))
		return s, s.Add(docs)
	}
	opts := manifests.Options{Recursive: m.recursive}
	if err := manifests.Walk(m.paths, nil, opts, s.Discover); err != nil {
		return nil, err
	}
	s.Judge(noteRefused(notes, cmd))
	return s, manifests.Walk(m.paths, nil, opts, s.Add)
}

// noteRefused says on notes that a document its CRD refuses is left out of the state, as
// the cluster would not hold it.
func noteRefused(notes io.Writer, cmd string) func(string, *crdvalidation.Refusal) {
	return func(where string, refusal *crdvalidation.Refusal) {
		fmt.Fprintf(notes, "%s: %s: left out, as the API server would refuse it: %v\n", progName(cmd), where, refusal)
	}
}
