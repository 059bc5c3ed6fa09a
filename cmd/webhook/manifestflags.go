package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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
	fs.StringVarP(&m.kustomize, "kustomize", "k", "", "a kustomization's `DIR` instead of -f, rendered by kubectl kustomize (or kustomize build) from PATH")
}

// given reports whether manifests were named at all.
func (m *manifestFlags) given() bool { return len(m.paths) > 0 || m.kustomize != "" }

// read returns the documents of -f or -k, in order.
func (m *manifestFlags) read(stdin io.Reader) ([]manifests.Document, error) {
	if len(m.paths) > 0 && m.kustomize != "" {
		return nil, errors.New("give -f or -k, not both (as kubectl)")
	}
	if m.kustomize != "" {
		return readKustomization(m.kustomize)
	}
	if len(m.paths) == 0 {
		return nil, errors.New("no input: pass -f with a file or folder (repeatable), -f - for standard input, or -k with a kustomization folder")
	}
	return manifests.Read(m.paths, stdin, manifests.Options{Recursive: m.recursive})
}

// kustomizeTimeout bounds rendering one kustomization.
const kustomizeTimeout = 2 * time.Minute

// readKustomization renders the kustomization in dir with the kubectl or kustomize on PATH.
// The kustomize library is not linked in: it would add 21.6 MB (a third) to a binary that
// is also the webhook's image (BENCHMARKS.md, "The CLI's size").
func readKustomization(dir string) ([]manifests.Document, error) {
	var args []string
	if path, err := exec.LookPath("kubectl"); err == nil {
		args = []string{path, "kustomize", dir}
	} else if path, err := exec.LookPath("kustomize"); err == nil {
		args = []string{path, "build", dir}
	} else {
		return nil, fmt.Errorf("-k %s: neither kubectl nor kustomize is on PATH to render it; render it yourself and pipe it in: kustomize build %s | webhook ... -f -", dir, dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), kustomizeTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("-k %s: %s %s: %v: %s", dir, filepath.Base(args[0]), args[1], err, strings.TrimSpace(stderr.String()))
	}
	return manifests.Decode(dir, stdout.Bytes())
}
