// Package manifests reads Kubernetes objects from YAML and JSON files the way kubectl -f
// does: a folder's files (and, recursively, its subfolders' with -R) in lexical order,
// documents in order, Lists expanded.
package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// MaxFileBytes bounds one input file; a larger one is refused rather than read into memory.
const MaxFileBytes = 4 << 20

// Document is one object read from a file.
type Document struct {
	// Source is the file name ("-" for standard input).
	Source string
	// Index is the 1-based document number within the file.
	Index  int
	Object map[string]any
}

// Where names the document for messages: "dir/a.yaml document 2".
func (d Document) Where() string { return fmt.Sprintf("%s document %d", d.Source, d.Index) }

// InputError is bad input: the CLI reports it and exits 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Options say how folders are read.
type Options struct {
	// Recursive reads the files of subfolders too (kubectl -R); without it, a folder's own
	// files only.
	Recursive bool
}

// Read reads every document under paths, in order. stdin is used for the path "-".
func Read(paths []string, stdin io.Reader, opts Options) ([]Document, error) {
	var docs []Document
	err := Walk(paths, stdin, opts, func(d []Document) error {
		docs = append(docs, d...)
		return nil
	})
	return docs, err
}

// Walk reads the documents under paths file by file, in order, and hands each file's
// documents to fn; nothing is kept between files, so a large folder costs the memory of
// its largest file. stdin is used for the path "-" (and can be read once).
func Walk(paths []string, stdin io.Reader, opts Options, fn func([]Document) error) error {
	if len(paths) == 0 {
		return inputErrorf("no input: pass -f with a file or folder (repeatable), or -f - for standard input")
	}
	for _, p := range paths {
		files, err := expand(p, opts.Recursive)
		if err != nil {
			return err
		}
		for _, f := range files {
			if isKustomization(f) {
				return inputErrorf("%s: a kustomization, not manifests: read what it renders with -k %s", f, filepath.Dir(f))
			}
			data, err := readFile(f, stdin)
			if err != nil {
				return err
			}
			d, err := Decode(f, data)
			if err != nil {
				return err
			}
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// expand lists the files a path stands for.
func expand(p string, recursive bool) ([]string, error) {
	if p == "-" {
		return []string{"-"}, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil, inputErrorf("%s: %v", p, unwrapPathError(err))
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files, subfolders []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != p && !recursive {
			subfolders = append(subfolders, path)
			return fs.SkipDir
		}
		if !d.IsDir() && isManifest(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, inputErrorf("%s: %v", p, unwrapPathError(err))
	}
	if len(files) == 0 && len(subfolders) > 0 {
		return nil, inputErrorf("%s: no .yaml, .yml or .json files in this folder, only in its subfolders: add -R to read them", p)
	}
	if len(files) == 0 {
		return nil, inputErrorf("%s: no .yaml, .yml or .json files in this folder", p)
	}
	return files, nil
}

// isKustomization reports a kustomize file by the names kustomize looks for.
func isKustomization(path string) bool {
	switch filepath.Base(path) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

func isManifest(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func readFile(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, inputErrorf("%s: %v", name, unwrapPathError(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, inputErrorf("%s: %v", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, inputErrorf("%s: larger than the %d MiB limit for one file; split it into smaller files", name, MaxFileBytes>>20)
	}
	return data, nil
}

// Decode splits a file into documents and expands Lists. Numbers read as the API server
// reads them (an integer an int64 holds is an int64, any other number a float64), so that
// 9007199254740993 is not read as 9007199254740992: each document is taken as JSON text
// (YAML converted) and read with the API server's own reader.
func Decode(source string, data []byte) ([]Document, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []Document
	for index := 1; ; index++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		var obj map[string]any
		if err == nil && len(raw) > 0 {
			err = utiljson.Unmarshal(raw, &obj)
		}
		if err != nil {
			return nil, inputErrorf("%s document %d: not valid YAML or JSON: %v", source, index, err)
		}
		if len(obj) == 0 {
			continue // an empty document, as between two `---`
		}
		d := Document{Source: source, Index: index, Object: obj}
		items, err := expandList(d)
		if err != nil {
			return nil, err
		}
		docs = append(docs, items...)
	}
}

func expandList(d Document) ([]Document, error) {
	if err := checkTypeMeta(d, d.Object); err != nil {
		return nil, err
	}
	kind, _ := d.Object["kind"].(string)
	raw, hasItems := d.Object["items"]
	if !strings.HasSuffix(kind, "List") || !hasItems {
		return []Document{d}, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, inputErrorf("%s: %s `items` must be a list", d.Where(), kind)
	}
	out := make([]Document, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, inputErrorf("%s: %s items[%d] must be an object", d.Where(), kind, i)
		}
		if err := checkTypeMeta(d, m); err != nil {
			return nil, fmt.Errorf("%w (items[%d])", err, i)
		}
		out = append(out, Document{Source: d.Source, Index: d.Index, Object: m})
	}
	return out, nil
}

func checkTypeMeta(d Document, obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	switch {
	case kind == "":
		return inputErrorf("%s: no `kind`; every object needs `apiVersion` and `kind`", d.Where())
	case apiVersion == "":
		return inputErrorf("%s: %s has no `apiVersion`", d.Where(), kind)
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
