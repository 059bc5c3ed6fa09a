// Package repofiles looks at what the repository tracks, as git records it: the blobs in
// git's index (what the next commit holds), not the files in the work tree. It exists for
// one rule: a clone carries sources, not build outputs, so no tracked file is larger than
// MaxTrackedSize (TestNoLargeTrackedFiles, run by `make test` and CI).
package repofiles

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// MaxTrackedSize is the largest file the repository may track: 1 MiB. The largest sources
// are a fraction of it; a compiled webhook binary is about sixty times it.
const MaxTrackedSize = 1 << 20

// File is one tracked file and the size of its blob.
type File struct {
	Path string
	Size int64
}

// Tracked lists every file in the index of the git work tree at root, with its blob's
// size, sorted by path. Submodules (gitlinks) are left out: they hold no blob here.
func Tracked(root string) ([]File, error) {
	ls := exec.Command("git", "ls-files", "-z", "--stage")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w%s", err, stderr(err))
	}
	var (
		files []File
		ids   bytes.Buffer
	)
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unexpected record %q", rec)
		}
		if fields[0] == "160000" {
			continue
		}
		files = append(files, File{Path: path})
		ids.WriteString(fields[1] + "\n")
	}
	if len(files) == 0 {
		return nil, nil
	}
	cat := exec.Command("git", "cat-file", "--batch-check=%(objectsize)")
	cat.Dir, cat.Stdin = root, &ids
	out, err = cat.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w%s", err, stderr(err))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		if i >= len(files) {
			return nil, fmt.Errorf("git cat-file: more sizes than files")
		}
		n, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git cat-file: size of %s: %q", files[i].Path, sc.Text())
		}
		files[i].Size = n
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, sc.Err()
}

// Larger returns the files larger than limit bytes, largest first.
func Larger(files []File, limit int64) []File {
	var big []File
	for _, f := range files {
		if f.Size > limit {
			big = append(big, f)
		}
	}
	sort.SliceStable(big, func(i, j int) bool { return big[i].Size > big[j].Size })
	return big
}

func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
