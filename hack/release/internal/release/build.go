package release

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// BuildBinary cross-compiles the main package pkg of the module at dir for linux/arch into
// out, static and stamped with version as the Dockerfile and `make image-tar` build it:
// CGO_ENABLED=0, -trimpath, -ldflags "-s -w -X main.version=VERSION".
func BuildBinary(dir, pkg, arch, version, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for linux/%s: %w\n%s", pkg, arch, err, msg)
	}
	return nil
}

// VCS is the commit a release is built from, as git reports it.
type VCS struct {
	Revision string    // the commit
	Time     time.Time // its commit time
	Modified bool      // whether tracked files differ from it
}

// ReadVCS asks git about the work tree at dir. The binaries' build information may not say
// (-buildvcs=false is common in CI), so the release reads it itself.
func ReadVCS(dir string) (VCS, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w%s", strings.Join(args, " "), err, exitStderr(err))
		}
		return strings.TrimSpace(string(out)), nil
	}
	var v VCS
	line, err := git("log", "-1", "--format=%H %cI")
	if err != nil {
		return v, err
	}
	rev, when, _ := strings.Cut(line, " ")
	if v.Time, err = time.Parse(time.RFC3339, when); err != nil {
		return v, fmt.Errorf("git log: commit time %q: %w", when, err)
	}
	v.Revision = rev
	status, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return v, err
	}
	v.Modified = status != ""
	return v, nil
}
