package repofiles

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoLargeTrackedFiles: the repository tracks no file over 1 MiB. Build outputs
// (cmd/webhook/webhook, e2e, *.test, dist/) belong in .gitignore, data in a generator.
func TestNoLargeTrackedFiles(t *testing.T) {
	root := repoRoot(t)
	files, err := Tracked(root)
	require.NoError(t, err)
	require.NotEmpty(t, files, "git ls-files listed nothing in %s", root)
	for _, f := range Larger(files, MaxTrackedSize) {
		t.Errorf("%s is tracked and %.1f MiB (at most %d MiB): untrack it (git rm --cached %s) and ignore it, or make it smaller",
			f.Path, float64(f.Size)/(1<<20), MaxTrackedSize>>20, f.Path)
	}
}

// TestTrackedSizesAreTheIndexs: the sizes are the blobs' in git's index (what a commit
// takes), found for every tracked file, staged but uncommitted ones too; files that are
// ignored or untracked do not count.
func TestTrackedSizesAreTheIndexs(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.test"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	write := func(name string, size int) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", size)), 0o644))
	}
	git("init", "-q")
	write("small.txt", 10)
	write("dir/with space/big.bin", MaxTrackedSize+1)
	write(".gitignore", 0)
	git("add", ".")
	git("commit", "-q", "-m", "c")
	write("staged.bin", 2*MaxTrackedSize)
	git("add", "staged.bin")
	write("untracked.bin", 3*MaxTrackedSize)
	write("small.txt", 5*MaxTrackedSize) // grown in the work tree only: the index holds 10 bytes

	files, err := Tracked(dir)
	require.NoError(t, err)
	assert.Equal(t, []File{
		{Path: ".gitignore", Size: 0},
		{Path: "dir/with space/big.bin", Size: MaxTrackedSize + 1},
		{Path: "small.txt", Size: 10},
		{Path: "staged.bin", Size: 2 * MaxTrackedSize},
	}, files)
	assert.Equal(t, []File{
		{Path: "staged.bin", Size: 2 * MaxTrackedSize},
		{Path: "dir/with space/big.bin", Size: MaxTrackedSize + 1},
	}, Larger(files, MaxTrackedSize))
}

// repoRoot is the top of the git work tree holding this package; the test is skipped
// where there is none (a source tarball) or no git.
func repoRoot(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip(fmt.Sprintf("not in a git work tree: %v", err))
	}
	return strings.TrimSpace(string(out))
}
